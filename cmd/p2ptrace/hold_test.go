package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/replay"
)

// TestCheckHeldPostReproducesWithReplay: rank 1 posts its receive as it
// starts and rank 0 sends in ready mode a microsecond later, with nothing
// between them: check reports the ready send as the hold of rank 1 shows
// it, and replay with the hold check names shows it again; replay as
// recorded does not (the timing posted the receive first).
func TestCheckHeldPostReproducesWithReplay(t *testing.T) {
	path := recordInProcess(t, "ready-timing", 2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		if r.ID() == 1 {
			q, err := r.Irecv(b, 0, 0)
			if err != nil {
				return err
			}
			_, err = r.Wait(q)
			return err
		}
		if err := r.Compute(time.Microsecond); err != nil {
			return err
		}
		return r.Rsend(b, 1, 0)
	})
	code, out, _ := runCmd(t, "check", "--json", path)
	var checked struct {
		Findings []replay.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &checked); err != nil || code != 1 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if len(checked.Findings) != 1 || checked.Findings[0].Kind != "ready-without-recv" || checked.Findings[0].RevealedBy != "--hold-post 1:0" {
		t.Fatalf("check found %+v", checked.Findings)
	}
	code, out, _ = runCmd(t, "replay", "--hold-post", "1:0", path)
	if code != 1 || !strings.Contains(out, "[1] ready-without-recv (cause: program) under --hold-post 1:0 (seed 0)") {
		t.Fatalf("replay --hold-post 1:0: exit %d\n%s", code, out)
	}
	if code, out, _ := runCmd(t, "replay", path); code != 0 {
		t.Fatalf("replay as recorded: exit %d\n%s", code, out)
	}
	for _, c := range []struct{ arg, want string }{
		{"1", `p2ptrace: --hold-post: held post "1": want RANK:SEQ, e.g. 1:3 (rank 1 held back before its op 3)`},
		{"2:0", "p2ptrace: --hold-post 2:0: the trace has ranks 0..1\n"},
	} {
		code, _, errs := runCmd(t, "replay", "--hold-post", c.arg, path)
		if code != 2 || !strings.HasPrefix(errs, c.want) || strings.Contains(errs, "goroutine ") {
			t.Errorf("--hold-post %s: exit %d, stderr %q, want exit 2 and %q", c.arg, code, errs, c.want)
		}
	}
}
