package sim

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"

	"github.com/p2ptrace/p2ptrace/verdict"
)

// InFlightMutation is the problem of a nonblocking send, or a nonblocking
// collective's send side, whose buffer changed between its post and its
// completion (the payload hashes taken then differ): the program wrote the
// buffer while the runtime could still read it. Live recordings and
// recorded traces report it with this one text.
//
// names is the vocabulary of the report (see Config.Names).
func InFlightMutation(names *trace.Names, send *Op) Problem {
	buffer := "the buffer"
	if send.Kind.IsNonblockingCollective() {
		buffer = "the send buffer" // (MPI-3.1 sec. 5.12)
	}
	return Problem{Kind: verdict.InFlightMutation, Ranks: []int{int(send.Rank)}, Ops: []*Op{send}, names: names,
		Message: fmt.Sprintf("rank %d: %s of %s was written between the call and its completion (hash at post != hash at completion): wait for the request before writing the buffer", send.Rank, buffer, DescribeIn(names, send))}
}
