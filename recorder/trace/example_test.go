package trace_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "p2ptrace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.p2ptrace")

	w, err := trace.Create(path, trace.Header{WorldSize: 2, Backend: "sim", Command: []string{"prog"}}, trace.WriterOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	w.AddSite(trace.Site{ID: 1, Function: "main.main", File: "main.go", Line: 12})
	w.Append(&trace.Event{Kind: trace.KindPost, Rank: 0, Seq: 0, Op: trace.OpSend, Peer: 1, Bytes: 8, Site: 1})
	w.Append(&trace.Event{Kind: trace.KindPost, Rank: 1, Seq: 0, Op: trace.OpRecv, Peer: 0, Bytes: 8, Site: 1})
	w.Append(&trace.Event{Kind: trace.KindDone, Rank: 0, Seq: 0, Op: trace.OpSend, MatchRank: 1, MatchSeq: 0, DoneVT: 1000})
	w.Append(&trace.Event{Kind: trace.KindDone, Rank: 1, Seq: 0, Op: trace.OpRecv, MatchRank: 0, MatchSeq: 0, DoneVT: 1000})
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		fmt.Println(err)
		return
	}
	r, _ := trace.Open(path)
	defer r.Close()
	fmt.Println(r.Header().Status, r.Header().Events, "events")
	// Output: complete 4 events
}

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "p2ptrace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.p2ptrace")
	w, _ := trace.Create(path, trace.Header{WorldSize: 1}, trace.WriterOptions{})
	w.Append(&trace.Event{Kind: trace.KindPost, Rank: 0, Seq: 0, Op: trace.OpCompute, Duration: 500})
	w.Append(&trace.Event{Kind: trace.KindDone, Rank: 0, Seq: 0, Op: trace.OpCompute, DoneVT: 500})
	w.Close(trace.StatusComplete, "")

	r, err := trace.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	if r.Incomplete() {
		fmt.Println("the recording was cut short")
	}
	for rank := 0; rank < r.Ranks(); rank++ {
		c := r.Rank(rank)
		var ev trace.Event
		for c.Next(&ev) {
			fmt.Println(ev.Rank, ev.Seq, ev.Op, ev.Kind == trace.KindDone, ev.DoneVT)
		}
		if err := c.Err(); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// 0 0 Compute false 0
	// 0 0 Compute true 500
}
