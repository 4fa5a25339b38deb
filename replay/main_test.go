package replay_test

import (
	"os"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
)

func TestMain(m *testing.M) {
	mpitest.UseTestPML()
	os.Exit(m.Run())
}
