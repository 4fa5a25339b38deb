package sim

import "math/bits"

// keyTable maps the envelope keys of a matchIndex to their FIFOs: an open
// addressing table with linear probing, on a multiplicative hash of the
// three ints (a Go map hashes the 24-byte key through the generic path,
// several times the instructions of the rest of a match). A key whose FIFO
// empties stays, empty (head 0), for its next entry; the keys left empty go
// when the table would grow, so that keys that come and go (tags that count
// iterations) cost no delete each and do not pile up either.
type keyTable struct {
	slots []keySlot // a power of two, at most half full
	n     int
	shift uint8 // 64 - log2(len(slots))
}

// keySlot is one key and its FIFO; a slot is in use when its FIFO's tail is
// set (a node id, never 0 once a key was inserted): no flag, so a slot is
// 32 bytes, two to a cache line.
type keySlot struct {
	key envKey
	f   fifo
}

func (s *keySlot) used() bool { return s.f.tail != 0 }

const minKeySlots = 16

func (t *keyTable) home(k envKey) int {
	// One multiply: the fields, rotated apart, are folded into a word
	// first (distinct for ranks and tags below 2^21), and the product's top
	// bits pick the slot.
	h := uint64(k.src) ^ bits.RotateLeft64(uint64(k.tag), 21) ^ bits.RotateLeft64(uint64(k.comm), 42)
	return int(h * 0x9e3779b97f4a7c15 >> t.shift)
}

// find returns the slot of k, or -1. The slot is good until the next put.
func (t *keyTable) find(k envKey) int {
	if t.n == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used() {
			return -1
		}
		if s.key == k {
			return i
		}
	}
}

// live reports whether k has entries.
func (t *keyTable) live(k envKey) bool {
	i := t.find(k)
	return i >= 0 && t.slots[i].f.head != 0
}

// put returns the FIFO of k, adding k with an empty FIFO if it is absent:
// the caller then sets its tail, which marks the slot used. The pointer is
// good until the next put.
func (t *keyTable) put(k envKey) *fifo {
	if len(t.slots) > 0 {
		mask := len(t.slots) - 1
		for i := t.home(k); ; i = (i + 1) & mask {
			s := &t.slots[i]
			if !s.used() {
				if 2*(t.n+1) <= len(t.slots) {
					s.key, s.f = k, fifo{}
					t.n++
					return &s.f
				}
				break // full: grow, then insert
			}
			if s.key == k {
				return &s.f
			}
		}
	}
	t.grow()
	mask := len(t.slots) - 1
	i := t.home(k)
	for t.slots[i].used() {
		i = (i + 1) & mask
	}
	s := &t.slots[i]
	s.key, s.f = k, fifo{}
	t.n++
	return &s.f
}

// grow drops the empty keys, and doubles the slots unless that left the
// table at most a quarter full.
func (t *keyTable) grow() {
	old := t.slots
	live := 0
	for i := range old {
		if old[i].f.head != 0 {
			live++
		}
	}
	size := len(old)
	if 4*(live+1) > size {
		size = max(minKeySlots, 2*size)
	}
	t.slots = make([]keySlot, size)
	t.shift = uint8(64 - log2(size))
	t.n = 0
	mask := size - 1
	for _, s := range old {
		if s.f.head != 0 {
			i := t.home(s.key)
			for t.slots[i].used() {
				i = (i + 1) & mask
			}
			t.slots[i] = s
			t.n++
		}
	}
}

// clear empties the table, keeping its slots.
func (t *keyTable) clear() {
	if t.n != 0 {
		clear(t.slots)
		t.n = 0
	}
}

func log2(n int) int {
	b := 0
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}
