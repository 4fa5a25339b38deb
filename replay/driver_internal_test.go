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
