package gpu_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// payloadSink keeps events and payloads in memory.
type payloadSink struct {
	events   []trace.Event
	payloads map[uint64][]byte
}

func (s *payloadSink) Append(ev *trace.Event) { s.events = append(s.events, *ev) }
func (s *payloadSink) AddSite(trace.Site)     {}
func (s *payloadSink) AddPayload(hash uint64, data []byte) {
	s.payloads[hash] = append([]byte(nil), data...)
}

// TestRecordStoresPayloadAtPostAndCompletionOfMutatedIsend: an Isend above
// the eager limit whose buffer is written before its Wait gets both its
// payload at post and the one at completion stored, so a report can show
// what changed.
func TestRecordStoresPayloadAtPostAndCompletionOfMutatedIsend(t *testing.T) {
	sink := &payloadSink{payloads: map[uint64][]byte{}}
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 64)
		if r.ID() == 0 {
			if err := r.Compute(1000); err != nil {
				return err
			}
			q, err := r.Isend(b, 1, 0)
			if err != nil {
				return err
			}
			b.Float32s()[2] = 9
			_, err = r.Wait(q)
			return err
		}
		_, err := r.Recv(b, 0, 0)
		return err
	}, gpu.RecordTo(sink), gpu.RecordPayloads(), gpu.EagerLimit(16))
	if err == nil {
		t.Fatal("the in-flight mutation was not reported")
	}
	for _, ev := range sink.events {
		if ev.Kind != trace.KindDone || ev.Op != trace.OpIsend {
			continue
		}
		if ev.HashPost == 0 || ev.HashDone == ev.HashPost {
			t.Fatalf("Isend done: hash at post %x, at completion %x", ev.HashPost, ev.HashDone)
		}
		post, done := sink.payloads[ev.HashPost], sink.payloads[ev.HashDone]
		if len(post) != 256 || len(done) != 256 {
			t.Fatalf("payloads at post %d bytes, at completion %d bytes: want both 256", len(post), len(done))
		}
		if v := math.Float32frombits(binary.LittleEndian.Uint32(done[8:])); v != 9 || post[8] != 0 {
			t.Fatalf("element 2: at completion %v, at post %v", v, post[8])
		}
		return
	}
	t.Fatal("no Isend completion recorded")
}
