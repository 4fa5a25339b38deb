package harness

import (
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// writeTrace records one fault-free run of fn with seed into a trace file.
func writeTrace(path string, ranks int, fn func(*gpu.Rank) error, c *config, seed uint64) error {
	hdr := trace.Header{Command: []string{"harness"}, WorldSize: ranks, Backend: "sim", EagerLimit: sim.DefaultEagerLimit,
		LatencyNS: int64(sim.DefaultLatency), BandwidthBps: sim.DefaultBandwidth, Seed: seed, HashMode: gpu.HashFull}
	w, err := trace.Create(path, hdr, trace.WriterOptions{Force: true})
	if err != nil {
		return err
	}
	runErr := launch(ranks, fn, c, nil, seed, w)
	status, fs := gpu.Outcome(runErr)
	w.SetHeader(func(h *trace.Header) { h.Findings = fs })
	return w.Close(status, "")
}
