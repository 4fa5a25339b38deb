package replay

import "github.com/p2ptrace/p2ptrace/gpu/sim"

// reqTable maps a rank's request ids to ops. Recorded ids are small
// increasing integers, or handles reused once freed, so a direct-mapped
// table of slots (by the id's low bits) holds nearly all of them. It starts
// small (a rank's slots are a cache line or four) and doubles when two live
// ids meet in a slot; past its largest size, an id whose slot is taken goes
// to a map.
type reqTable struct {
	slots []reqSlot // made on first put; the length is a power of two
	far   map[uint64]*sim.Op
}

type reqSlot struct {
	id uint64
	op *sim.Op // nil: the slot is free
}

const (
	minReqSlots = 4 // a cache line
	// maxReqSlots holds the requests of a rank of a 1024-rank all-to-all
	// (2046 live ids, consecutive) without the map: 64 KiB at most, made
	// only by a rank that holds that many.
	maxReqSlots = 4096
)

func (t *reqTable) slot(id uint64) *reqSlot {
	return &t.slots[id&uint64(len(t.slots)-1)]
}

func (t *reqTable) get(id uint64) (*sim.Op, bool) {
	if t.slots != nil {
		if s := t.slot(id); s.op != nil && s.id == id {
			return s.op, true
		}
	}
	op, ok := t.far[id]
	return op, ok
}

// tryPut is put's common case, small enough to be inlined in the driver's
// loop: it maps id to op when the tables hold no map and the id's slot is
// free or its own, and reports whether it did; put does the rest.
func (t *reqTable) tryPut(id uint64, op *sim.Op) bool {
	if t.far != nil || t.slots == nil {
		return false
	}
	s := t.slot(id)
	if s.op != nil && s.id != id {
		return false
	}
	s.id, s.op = id, op
	return true
}

// put maps id to op.
func (t *reqTable) put(id uint64, op *sim.Op) {
	if t.tryPut(id, op) {
		return
	}
	if t.slots == nil {
		t.slots = make([]reqSlot, minReqSlots)
	}
	if t.far != nil {
		delete(t.far, id) // a reused id: the slot's entry replaces it
	}
	s := t.slot(id)
	for s.op != nil && s.id != id && len(t.slots) < maxReqSlots {
		t.grow()
		s = t.slot(id)
	}
	if s.op == nil || s.id == id {
		s.id, s.op = id, op
		return
	}
	if t.far == nil {
		t.far = map[uint64]*sim.Op{}
	}
	t.far[id] = op
}

// grow doubles the slots. An id's new slot is its old one or that plus the
// old size, so the live ids never meet in the larger table.
func (t *reqTable) grow() {
	old := t.slots
	t.slots = make([]reqSlot, 2*len(old))
	for _, e := range old {
		if e.op != nil {
			*t.slot(e.id) = e
		}
	}
}

func (t *reqTable) del(id uint64) { t.take(id) }

// take removes id and returns its op, or nil if id is unknown.
func (t *reqTable) take(id uint64) *sim.Op {
	if t.slots != nil {
		if s := t.slot(id); s.op != nil && s.id == id {
			op := s.op
			s.op = nil
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
