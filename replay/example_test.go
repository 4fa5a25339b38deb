package replay_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// Record a head-to-head exchange of small messages (it completes: the sends
// are buffered), then check the trace: under sync (zero buffering) it
// deadlocks, and each Send is unsafe.
func ExampleCheckTrace() {
	dir, err := os.MkdirTemp("", "p2ptrace-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "trace.db")
	w, err := trace.Create(path, trace.Header{Command: []string{"example"}, WorldSize: 2, Backend: "sim"}, trace.WriterOptions{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	err = gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Int32, 16)
		peer := 1 - r.ID()
		if err := r.Send(buf, peer, 0); err != nil {
			return err
		}
		_, err := r.Recv(buf, peer, 0)
		return err
	}, gpu.RecordTo(w))
	status, fs := gpu.Outcome(err)
	w.SetHeader(func(h *trace.Header) { h.Findings = fs })
	if err := w.Close(status, ""); err != nil {
		log.Fatal(err)
	}

	tr, err := replay.OpenTrace(path)
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	rep, err := replay.CheckTrace(tr, replay.CheckOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range rep.Findings {
		fmt.Println(f.Kind, f.Ranks, "under", f.RevealedBy)
	}
	// Output:
	// deadlock [0 1] under sync
	// unsafe-buffering [0 1] under sync
	// unsafe-buffering [1 0] under sync
}
