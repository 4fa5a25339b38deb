package gpu_test

import "github.com/p2ptrace/p2ptrace/faults"

type (
	faultsMessage = faults.Message
	faultsAction  = faults.Action
)
