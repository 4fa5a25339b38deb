package gpu

import (
	"fmt"
	"os"
	"time"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// recordingFromEnv opens the trace that P2PTRACE_TRACE names, or returns nil.
func recordingFromEnv(cfg *config, ranks int, sites *siteTable) (*recorder, error) {
	path := os.Getenv(EnvTrace)
	if path == "" {
		return nil, nil
	}
	hash := os.Getenv(EnvHash)
	switch hash {
	case "":
		hash = HashFull
	case HashFull, HashSample, HashOff:
	default:
		return nil, fmt.Errorf("gpu: %s=%q: want full, sample or off", EnvHash, hash)
	}
	if v := os.Getenv(EnvEager); v != "" {
		var n int64
		if _, err := fmt.Sscan(v, &n); err != nil {
			return nil, fmt.Errorf("gpu: %s=%q: want a byte count", EnvEager, v)
		}
		cfg.eager = n
	}
	if v := os.Getenv(EnvSeed); v != "" {
		var n uint64
		if _, err := fmt.Sscan(v, &n); err != nil {
			return nil, fmt.Errorf("gpu: %s=%q: want an unsigned integer", EnvSeed, v)
		}
		cfg.seed = n
	}
	if v := os.Getenv(EnvTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("gpu: %s=%q: want a positive duration", EnvTimeout, v)
		}
		cfg.runTimeout = d
		cfg.wallTimeout = min(cfg.wallTimeout, d)
	}
	if v := os.Getenv(EnvPollLimit); v != "" {
		if _, err := fmt.Sscan(v, &cfg.pollLimit); err != nil {
			return nil, fmt.Errorf("gpu: %s=%q: want an integer", EnvPollLimit, v)
		}
	}
	hdr := trace.Header{
		Command: os.Args, WorldSize: ranks, Backend: "sim", EagerLimit: cfg.eager,
		LatencyNS: int64(cfg.latency), BandwidthBps: cfg.bandwidth, Seed: cfg.seed, HashMode: hash,
	}
	w, err := trace.Create(path, hdr, trace.WriterOptions{Force: os.Getenv(EnvForce) == "1"})
	if err != nil {
		return nil, err
	}
	rec := newRecorder(w, hash, os.Getenv(EnvPayloads) == "1", sites)
	rec.file = w
	return rec, nil
}
