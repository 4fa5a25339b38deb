package sim

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
	h := uint64(k.src)*0x9e3779b97f4a7c15 ^ uint64(k.tag)*0xc2b2ae3d27d4eb4f ^ uint64(k.comm)*0x165667b19e3779f9
	return int(h >> t.shift)
}

// find returns the FIFO of k, or nil. The pointer is good until the next
// insert or delete.
func (t *keyTable) find(k envKey) *fifo {
	if t.n == 0 {
		return nil
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used() {
			return nil
		}
		if s.key == k {
			return &s.f
		}
	}
}

// insert adds k, which must be absent, with FIFO f.
func (t *keyTable) insert(k envKey, f fifo) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	i := t.home(k)
	for t.slots[i].used() {
		i = (i + 1) & mask
	}
	t.slots[i] = keySlot{key: k, f: f}
	t.n++
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
