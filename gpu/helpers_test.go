package gpu_test

import (
	"errors"
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/verdict"
)

type (
	faultsMessage = faults.Message
	faultsAction  = faults.Action
)

// findingsOfKind returns the findings of kind k of a run that ended with
// err (nil or a *gpu.RunError; any other error fails the test).
func findingsOfKind(t *testing.T, k verdict.Kind, err error) []verdict.Finding {
	t.Helper()
	var re *gpu.RunError
	if err != nil && !errors.As(err, &re) {
		t.Fatalf("%v", err)
	}
	var out []verdict.Finding
	if re != nil {
		for _, f := range re.Findings {
			if f.Kind == k {
				out = append(out, f)
			}
		}
	}
	return out
}
