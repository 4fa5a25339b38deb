package replay

import "github.com/p2ptrace/p2ptrace/gpu/sim"

// reqTable maps a rank's request ids to ops. Recorded ids are small
// increasing integers, so a window of ids [base, base+n) is a slice
// (buf[head:]); ids outside it (sparse handles, long-lived requests that fell
// behind it) live in a map.
type reqTable struct {
	base uint64
	head int
	buf  []*sim.Op
	far  map[uint64]*sim.Op
}

const (
	reqJump   = 1 << 10 // an id this far past the window goes to the map
	reqWindow = 1 << 12 // a window this long spills its front half to the map
)

func (t *reqTable) slot(id uint64) int {
	if off := id - t.base; id >= t.base && off < uint64(len(t.buf)-t.head) {
		return t.head + int(off)
	}
	return -1
}

func (t *reqTable) get(id uint64) (*sim.Op, bool) {
	if i := t.slot(id); i >= 0 && t.buf[i] != nil {
		return t.buf[i], true
	}
	op, ok := t.far[id]
	return op, ok
}

func (t *reqTable) put(id uint64, op *sim.Op) {
	if t.head == len(t.buf) {
		t.buf, t.head, t.base = t.buf[:0], 0, id // an empty window starts anywhere
		if t.buf == nil {
			t.buf = make([]*sim.Op, 0, 64) // room to slide rarely
		}
	}
	if n := len(t.buf); id == t.base+uint64(n-t.head) && n < cap(t.buf) && n-t.head < reqWindow && t.far == nil {
		t.buf = append(t.buf, op) // the next id, with room: the usual case
		return
	}
	if id < t.base || id-t.base >= uint64(len(t.buf)-t.head)+reqJump {
		t.farPut(id, op)
		return
	}
	if t.far != nil {
		delete(t.far, id)
	}
	off := int(id - t.base)
	if n := t.head + off + 1; n > len(t.buf) {
		if n > cap(t.buf) && t.head > 0 {
			// Slide the window to the front of the buffer before growing it.
			k := copy(t.buf, t.buf[t.head:])
			clear(t.buf[k:])
			t.buf, t.head, n = t.buf[:k], 0, off+1
		}
		for len(t.buf) < n {
			t.buf = append(t.buf, nil)
		}
	}
	t.buf[t.head+off] = op
	if len(t.buf)-t.head > reqWindow {
		// Requests that stay unretired (Waitany, Test and Free keep their ids)
		// must not make the window grow forever.
		for _, o := range t.buf[t.head : t.head+reqWindow/2] {
			if o != nil {
				t.farPut(t.base, o)
			}
			t.base++
		}
		clear(t.buf[t.head : t.head+reqWindow/2])
		t.head += reqWindow / 2
		t.trim()
	}
}

func (t *reqTable) farPut(id uint64, op *sim.Op) {
	if t.far == nil {
		t.far = map[uint64]*sim.Op{}
	}
	t.far[id] = op
}

func (t *reqTable) del(id uint64) {
	if i := t.slot(id); i >= 0 && t.buf[i] != nil {
		t.buf[i] = nil
		t.trim()
		return
	}
	delete(t.far, id)
}

// take removes id and returns its op, or nil if id is unknown.
func (t *reqTable) take(id uint64) *sim.Op {
	if i := t.slot(id); i >= 0 {
		if op := t.buf[i]; op != nil {
			t.buf[i] = nil
			if i == t.head {
				t.trim()
			}
			return op
		}
	}
	op, ok := t.far[id]
	if !ok {
		return nil
	}
	delete(t.far, id)
	return op
}

// trim advances the window past retired ids.
func (t *reqTable) trim() {
	for t.head < len(t.buf) && t.buf[t.head] == nil {
		t.head++
		t.base++
	}
}
