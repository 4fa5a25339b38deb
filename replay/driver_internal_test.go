package replay

import (
	"testing"
	"unsafe"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestModeOf pins the mode of each send op (modeOf computes it from the
// ops' numbering).
func TestModeOf(t *testing.T) {
	for o, want := range map[trace.Op]sim.Mode{
		trace.OpSend: sim.Standard, trace.OpSsend: sim.Synchronous, trace.OpBsend: sim.Buffered, trace.OpRsend: sim.Ready,
		trace.OpIsend: sim.Standard, trace.OpIssend: sim.Synchronous, trace.OpIbsend: sim.Buffered, trace.OpIrsend: sim.Ready,
		trace.OpSendrecv: sim.Standard, trace.OpStreamSend: sim.Standard,
	} {
		if got := modeOf(o); got != want {
			t.Errorf("modeOf(%s) = %d, want %d", o, got, want)
		}
	}
}

// TestRankCursorLayout pins what rankCursor's doc says: four cache lines,
// the fields step reads per event and per call in the first three.
func TestRankCursorLayout(t *testing.T) {
	var c rankCursor
	if n := unsafe.Sizeof(c); n != 256 {
		t.Errorf("rankCursor is %d bytes, want 256", n)
	}
	if end := unsafe.Offsetof(c.sendrecv) + unsafe.Sizeof(c.sendrecv); end > 192 {
		t.Errorf("step's fields end at byte %d, past the third cache line", end)
	}
}

// TestRunSourceBuffersOnlyRanksWithEvents: a plain Source read a run at a
// time costs a rank nothing until its first event, then firstRun events,
// and plainRun once a run fills that: a header may claim a million ranks.
func TestRunSourceBuffersOnlyRanksWithEvents(t *testing.T) {
	const ranks = 100_000
	ev := make(Events, ranks)
	for i := range 3 * plainRun {
		ev[7] = append(ev[7], trace.Event{Kind: trace.KindPost, Rank: 7, Seq: uint64(i), Op: trace.OpCompute, Duration: 1})
	}
	ev[9] = []trace.Event{{Kind: trace.KindPost, Rank: 9, Op: trace.OpFinalize}}
	s := &runSource{src: struct{ Source }{ev.Source()}}
	s.readRefs(false)
	for r := range ranks {
		for {
			win, _ := s.nextRefs(r)
			if len(win) == 0 {
				break
			}
		}
	}
	for r, run := range s.runs {
		want := 0
		switch r {
		case 7:
			want = plainRun
		case 9:
			want = firstRun
		}
		if len(run) != want {
			t.Fatalf("rank %d: a run buffer of %d events, want %d", r, len(run), want)
		}
	}
}
