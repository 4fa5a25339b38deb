package verdict_test

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/verdict"
)

// A finding names its kind, ranks and ops; the report renders it the same
// way whichever door found it.
func Example() {
	send := verdict.OpRef{Rank: 0, Seq: 0, Op: "Send", Peer: 1, Tag: 7, Site: "main.go:12", Call: "Send to rank 1 tag 7 (64 bytes)"}
	f := verdict.New(verdict.UnmatchedSend, []int{0, 1}, "rank 0: Send to rank 1 tag 7 (64 bytes) was never received", send)
	rep := verdict.Report{Findings: []verdict.Finding{f}}
	fmt.Print(rep.Text())
	// Output:
	// 1 finding(s)
	//
	// [1] unmatched-send (cause: program)
	//     rank 0: Send to rank 1 tag 7 (64 bytes) was never received
	//     rank 0 op 0: Send to rank 1 tag 7 (64 bytes) at main.go:12
	//     hint: post a matching receive on the destination rank, or remove the send
}

// Kinds documents every kind of finding.
func ExampleKinds() {
	for _, k := range verdict.Kinds()[:2] {
		fmt.Printf("%s: %s\n", k.Kind, k.Meaning)
	}
	// Output:
	// deadlock: no rank can progress and the blocked ranks wait for each other: a cycle in the wait-for graph
	// hang: no rank can progress, with no cycle: a rank waits for a message nobody sends, for a rank that finished, or polls (Test, Iprobe) for a message that cannot come
}
