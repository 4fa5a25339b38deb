package sim

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/verdict"
)

// InFlightMutation is the problem of a nonblocking send whose buffer changed
// between its post and its completion (the payload hashes taken then
// differ): the program wrote the buffer while the runtime could still read
// it. Live recordings and recorded traces report it with this one text.
func InFlightMutation(send *Op) Problem {
	return Problem{Kind: verdict.InFlightMutation, Ranks: []int{send.Rank}, Ops: []*Op{send},
		Message: fmt.Sprintf("rank %d: the buffer of %s was written between the call and its completion (hash at post != hash at completion): wait for the request before writing the buffer", send.Rank, Describe(send))}
}
