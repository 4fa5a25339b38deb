package gpu_test

import (
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// headerSink is a payloadSink that also takes the header, as a trace file does.
type headerSink struct {
	payloadSink
	hdr trace.Header
}

func (s *headerSink) SetHeader(f func(*trace.Header)) { f(&s.hdr) }

// TestRecordNamesItsHashAlgorithm: the header names XXH3 and a send's hash
// at post is XXH3's of its payload.
func TestRecordNamesItsHashAlgorithm(t *testing.T) {
	sink := &headerSink{payloadSink: payloadSink{payloads: map[uint64][]byte{}}}
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Uint8, 3000)
		if r.ID() == 0 {
			for i := range b.Uint8s() {
				b.Uint8s()[i] = byte(i * 7)
			}
			return r.Send(b, 1, 0)
		}
		_, err := r.Recv(b, 0, 0)
		return err
	}, gpu.RecordTo(sink))
	if err != nil {
		t.Fatal(err)
	}
	if sink.hdr.HashAlgorithm() != trace.HashXXH3 || sink.hdr.HashMode != trace.HashFull {
		t.Fatalf("header: hash %q, algorithm %q", sink.hdr.HashMode, sink.hdr.HashAlgo)
	}
	h, err := trace.NewPayloadHasher(trace.HashXXH3, trace.HashFull)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 3000)
	for i := range want {
		want[i] = byte(i * 7)
	}
	for _, ev := range sink.events {
		if ev.Kind == trace.KindPost && ev.Op == trace.OpSend {
			if ev.HashPost != h.Hash(want) {
				t.Fatalf("send's hash at post %016x, want XXH3's %016x", ev.HashPost, h.Hash(want))
			}
			return
		}
	}
	t.Fatal("no send recorded")
}

// TestRecordEventsCarryNothingOver: the recorder reuses one event per kind,
// so each must clear what the previous op of another kind set (a compute's
// duration, a Waitany's index, a send's hashes).
func TestRecordEventsCarryNothingOver(t *testing.T) {
	sink := &payloadSink{payloads: map[uint64][]byte{}}
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 8)
		peer := 1 - r.ID()
		for range 2 {
			if err := r.Compute(time.Microsecond); err != nil {
				return err
			}
			q, err := r.Isend(b, peer, 0)
			if err != nil {
				return err
			}
			p, err := r.Irecv(r.Alloc(gpu.Int32, 8), peer, 0)
			if err != nil {
				return err
			}
			if _, _, err := r.Waitany(p, q); err != nil { // q, eager, is done: index 1
				return err
			}
			if err := r.Waitall(q, p); err != nil {
				return err
			}
			if err := r.Barrier(); err != nil {
				return err
			}
		}
		return nil
	}, gpu.RecordTo(sink))
	if err != nil {
		t.Fatal(err)
	}
	var waitanys int
	for _, ev := range sink.events {
		if ev.Kind == trace.KindPost && ev.Op != trace.OpCompute && ev.Duration != 0 {
			t.Errorf("rank %d seq %d %s post: duration %d", ev.Rank, ev.Seq, ev.Op, ev.Duration)
		}
		if !ev.Op.IsSend() && ev.HashPost != 0 || !ev.Op.IsSend() && !ev.Op.IsRecv() && ev.HashDone != 0 {
			t.Errorf("rank %d seq %d %s: hashes %x %x", ev.Rank, ev.Seq, ev.Op, ev.HashPost, ev.HashDone)
		}
		if ev.Kind == trace.KindDone && ev.Op == trace.OpWaitany {
			waitanys++
		} else if ev.Index != 0 || ev.Kind == trace.KindDone && len(ev.Reqs) != 0 {
			t.Errorf("rank %d seq %d %s: index %d, reqs %v", ev.Rank, ev.Seq, ev.Op, ev.Index, ev.Reqs)
		}
		if ev.Kind == trace.KindPost && (ev.DoneVT != 0 || ev.MatchSeq != 0 || ev.StatusCnt != 0) ||
			ev.Kind == trace.KindDone && (ev.PostVT != 0 || ev.Peer != 0 || ev.Bytes != 0 || ev.Site != 0) {
			t.Errorf("rank %d seq %d %s: a field of the other kind of event is set: %+v", ev.Rank, ev.Seq, ev.Op, ev)
		}
	}
	if waitanys != 4 {
		t.Errorf("%d Waitany completions, want 4", waitanys)
	}
}

// fieldsSink is a trace.Writer's side of the recorder's AppendFields: it
// keeps each event with the groups of fields the recorder declared.
type fieldsSink struct {
	events []trace.Event
	sets   []trace.Fields
}

func (s *fieldsSink) Append(ev *trace.Event) { s.AppendFields(ev, trace.AllFields) }
func (s *fieldsSink) AppendFields(ev *trace.Event, set trace.Fields) {
	s.events = append(s.events, *ev)
	s.sets = append(s.sets, set)
}
func (s *fieldsSink) AddSite(trace.Site) {}

// TestRecordDeclaresEveryFieldItSets: the recorder tells a trace writer
// which groups of fields its events may set (the encoder then skips the
// others, which must be zero); every event of every kind of call sets
// only fields of the groups declared with it.
func TestRecordDeclaresEveryFieldItSets(t *testing.T) {
	sink := &fieldsSink{}
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 8)
		in := r.Alloc(gpu.Int32, 8)
		peer := 1 - r.ID()
		if err := r.Compute(time.Microsecond); err != nil {
			return err
		}
		q, err := r.Isend(b, peer, 1)
		if err != nil {
			return err
		}
		p, err := r.Irecv(in, gpu.AnySource, 1)
		if err != nil {
			return err
		}
		if _, _, err := r.Waitany(p, q); err != nil {
			return err
		}
		if _, _, err := r.Test(p); err != nil {
			return err
		}
		if err := r.Waitall(q, p); err != nil {
			return err
		}
		if _, err := r.Sendrecv(b, peer, 2, in, peer, 2); err != nil {
			return err
		}
		s := r.NewStream()
		if r.ID() == 0 {
			err = s.Send(b, peer)
		} else {
			err = s.Recv(in, peer)
		}
		if err != nil {
			return err
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		return r.Barrier()
	}, gpu.RecordTo(sink))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[trace.Op]bool{}
	for i, ev := range sink.events {
		kinds[ev.Op] = true
		if extra := ev.SetFields() &^ sink.sets[i]; extra != 0 {
			t.Errorf("rank %d seq %d %s kind %d: sets groups %#x it declared unset (declared %#x)", ev.Rank, ev.Seq, ev.Op, ev.Kind, extra, sink.sets[i])
		}
	}
	if len(kinds) < 10 {
		t.Errorf("%d kinds of call recorded, want every one of the program's", len(kinds))
	}
}

// TestRecordKeepsMatchTimes: the engine keeps an op's match time only when
// it has an Observer (sim.Op.MatchT); the recorder is one, so each matched
// receive's and collective's done event carries it: when the last of its
// members was posted, never after the completion. (An eager send completes
// before its match: its done event has none.)
func TestRecordKeepsMatchTimes(t *testing.T) {
	sink := &payloadSink{payloads: map[uint64][]byte{}}
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 8)
		if r.ID() == 0 {
			if err := r.Compute(5 * time.Microsecond); err != nil {
				return err
			}
			if err := r.Send(b, 1, 0); err != nil {
				return err
			}
		} else if _, err := r.Recv(b, 0, 0); err != nil {
			return err
		}
		return r.Barrier()
	}, gpu.RecordTo(sink))
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for _, ev := range sink.events {
		if ev.Kind != trace.KindDone || ev.Op != trace.OpRecv && ev.Op != trace.OpBarrier {
			continue
		}
		checked++
		if ev.MatchVT < int64(5*time.Microsecond) || ev.MatchVT > ev.DoneVT {
			t.Errorf("rank %d %s: matched at %d, done at %d; want from 5us to the completion", ev.Rank, ev.Op, ev.MatchVT, ev.DoneVT)
		}
	}
	if checked != 3 {
		t.Errorf("%d done events of the receive and barriers, want 3", checked)
	}
}
