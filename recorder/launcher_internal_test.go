package recorder

import (
	"errors"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestLauncherError pins what a launcher's exit says about the program, for
// mpirun and torchrun alike: a launcher p2ptrace ended because it outlived
// ranks that all ended cleanly is no program failure (torchrun under load
// was reported "failed: signal: terminated" when only the MPI door had this
// rule); with a crashed rank it is one, and says what happened.
func TestLauncherError(t *testing.T) {
	killed := errors.New("signal: terminated")
	lingered := endReason{lingered: true}
	if err := launcherError(lingered, trace.StatusComplete, killed); err != nil {
		t.Errorf("lingering launcher after a complete run: %v, want nil", err)
	}
	err := launcherError(lingered, trace.StatusCrashed, killed)
	if !errors.Is(err, killed) || !strings.Contains(err.Error(), "the launcher did not exit and p2ptrace ended it") {
		t.Errorf("lingering launcher after a crash: %v", err)
	}
	if err := launcherError(endReason{}, trace.StatusComplete, killed); err != killed {
		t.Errorf("launcher that failed by itself: %v, want %v", err, killed)
	}
	if err := launcherError(lingered, trace.StatusCrashed, nil); err != nil {
		t.Errorf("no launcher error: %v", err)
	}
}
