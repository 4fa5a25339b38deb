package replay

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// PayloadSource is a Source whose trace holds payloads (recorded with
// --payloads): the data of a hash.
type PayloadSource interface {
	Payload(hash uint64) ([]byte, bool)
}

// DiffWindow is how many elements either side of the first differing one a
// corrupted-data finding shows.
const DiffWindow = 4

// Diff is where the data a receiver got differs from what was sent.
type Diff struct {
	Dtype trace.Dtype
	// First is the index of the first differing element.
	First int64
	// Start is the index of Got[0] and Want[0]: the window is
	// elements Start .. Start+len(Got)-1.
	Start int64
	// Got is what the receiver got (the send buffer at completion), Want
	// what was sent (the buffer at the send's call), formatted.
	Got, Want []string
}

// diffOf compares want and got element by element (elements of dtype) and
// returns nil when they agree.
func diffOf(dt trace.Dtype, want, got []byte) *Diff {
	size := dt.Size()
	if size <= 0 || dt == trace.Opaque {
		dt, size = trace.Uint8, 1
	}
	n := min(len(want), len(got)) / size
	first := -1
	for i := range n {
		if !slices.Equal(want[i*size:(i+1)*size], got[i*size:(i+1)*size]) {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	start, end := max(0, first-DiffWindow), min(n, first+DiffWindow+1)
	d := &Diff{Dtype: dt, First: int64(first), Start: int64(start)}
	for i := start; i < end; i++ {
		d.Want = append(d.Want, formatElem(dt, want[i*size:(i+1)*size]))
		d.Got = append(d.Got, formatElem(dt, got[i*size:(i+1)*size]))
	}
	return d
}

func formatElem(dt trace.Dtype, b []byte) string {
	switch dt {
	case trace.Float32:
		return strconv.FormatFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), 'g', -1, 32)
	case trace.Float64:
		return strconv.FormatFloat(math.Float64frombits(binary.LittleEndian.Uint64(b)), 'g', -1, 64)
	case trace.Int32:
		return strconv.FormatInt(int64(int32(binary.LittleEndian.Uint32(b))), 10)
	case trace.Int64:
		return strconv.FormatInt(int64(binary.LittleEndian.Uint64(b)), 10)
	}
	return strconv.Itoa(int(b[0]))
}

// lookupCorrupted fills in each corruption's Retired and Diff from a fresh
// source: it reads each sending rank until it has seen the send's
// completion and the call that retired its request.
func lookupCorrupted(open Opener, cs []Corruption) error {
	if len(cs) == 0 {
		return nil
	}
	src, err := open()
	if err != nil {
		return err
	}
	payloads, _ := src.(PayloadSource)
	byRank := map[int][]int{}
	for i, c := range cs {
		byRank[int(c.Send.Rank)] = append(byRank[int(c.Send.Rank)], i)
	}
	for _, rk := range slices.Sorted(maps.Keys(byRank)) {
		if rk < 0 || rk >= src.Ranks() {
			continue
		}
		type want struct {
			c       *Corruption
			req     uint64
			hashes  bool
			retired bool
			pending map[uint64]*trace.Event // Waitany/Test/Testall posts, until their Done says
		}
		var ws []*want
		for _, i := range byRank[rk] {
			ws = append(ws, &want{c: &cs[i], pending: map[uint64]*trace.Event{}})
		}
		left := len(ws) * 2
		var ev trace.Event
		for left > 0 && src.Next(rk, &ev) {
			for _, w := range ws {
				seq := w.c.Send.Seq
				switch {
				case ev.Kind == trace.KindPost && ev.Seq == seq:
					w.req = ev.Req
				case ev.Kind == trace.KindDone && ev.Seq == seq && !w.hashes:
					w.hashes = true
					left--
					if payloads != nil && ev.HashPost != 0 && ev.HashDone != 0 {
						sent, ok1 := payloads.Payload(ev.HashPost)
						got, ok2 := payloads.Payload(ev.HashDone)
						if ok1 && ok2 {
							w.c.Diff = diffOf(w.c.Send.Dtype, sent, got)
						}
					}
				case w.retired || w.req == 0 || ev.Seq <= seq:
				case ev.Kind == trace.KindPost && slices.Contains(ev.Reqs, w.req):
					switch ev.Op {
					case trace.OpWait, trace.OpWaitall:
						w.retired = true
						left--
						e := ev
						e.Reqs = nil
						w.c.Retired = &e
					case trace.OpWaitany, trace.OpTest, trace.OpTestall:
						e := ev
						e.Reqs = slices.Clone(ev.Reqs)
						w.pending[ev.Seq] = &e
					}
				case ev.Kind == trace.KindDone && w.pending[ev.Seq] != nil:
					p := w.pending[ev.Seq]
					delete(w.pending, ev.Seq)
					if p.Op == trace.OpWaitany && int(ev.Index) < len(p.Reqs) && p.Reqs[ev.Index] == w.req || p.Op != trace.OpWaitany && ev.Flag {
						w.retired = true
						left--
						p.Reqs = nil
						w.c.Retired = p
					}
				}
			}
		}
	}
	if err := src.Err(); err != nil {
		return fmt.Errorf("looking up the sends of corrupted data: %w", err)
	}
	return nil
}
