package gpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
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
	if v := os.Getenv(EnvForceMatch); v != "" {
		var f forcedMatch
		if _, err := fmt.Sscanf(v, "%d:%d=%d", &f.rank, &f.seq, &f.src); err != nil || f.rank < 0 || f.src < 0 {
			return nil, fmt.Errorf("gpu: %s=%q: want RANK:SEQ=SRC", EnvForceMatch, v)
		}
		cfg.force = &f
	}
	command := os.Args
	if v := os.Getenv(EnvCommand); v != "" {
		if err := json.Unmarshal([]byte(v), &command); err != nil {
			return nil, fmt.Errorf("gpu: %s=%q: want a JSON array of strings", EnvCommand, v)
		}
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
		Command: command, ToolVersion: toolVersion(), WorldSize: ranks, Backend: "sim", EagerLimit: cfg.eager,
		LatencyNS: int64(cfg.latency), BandwidthBps: cfg.bandwidth, Seed: cfg.seed, HashMode: hash, HashAlgo: payloadHashAlgo,
	}
	w, err := trace.Create(path, hdr, trace.WriterOptions{Force: os.Getenv(EnvForce) == "1"})
	if err != nil {
		return nil, err
	}
	rec := newRecorder(w, hash, os.Getenv(EnvPayloads) == "1", sites)
	rec.file = w
	rec.reported = os.Getenv(EnvReported) == "1"
	return rec, nil
}

// reportedError is the error of a run whose findings p2ptrace record prints
// (they are in the trace, the ranks' own errors and crashes too): their
// count and kinds in one line, so the program's copy of the report is not a
// second one.
func reportedError(err error) error {
	var re *RunError
	if !errors.As(err, &re) || len(re.Findings) == 0 {
		return err
	}
	var kinds []string
	for _, f := range re.Findings {
		if !slices.Contains(kinds, string(f.Kind)) {
			kinds = append(kinds, string(f.Kind))
		}
	}
	short := *re
	short.text = fmt.Sprintf("%d finding(s) recorded (%s): p2ptrace record prints the report", len(re.Findings), strings.Join(kinds, ", "))
	return &short
}

// modulePath is the module of package gpu, whose version a trace records.
const modulePath = "github.com/p2ptrace/p2ptrace"

// toolVersion is the version of p2ptrace built into the program, from its
// build info: the module version, or for a build inside the module
// ("(devel)") the VCS revision when the build stamped one.
func toolVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if bi.Main.Path == modulePath {
		v := bi.Main.Version
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			v += " " + rev[:min(len(rev), 12)]
			if modified == "true" {
				v += "+dirty"
			}
		}
		return modulePath + " " + v
	}
	for _, d := range bi.Deps {
		if d.Path != modulePath {
			continue
		}
		if d.Replace != nil {
			return modulePath + " " + d.Version + " => " + d.Replace.Path + " " + d.Replace.Version
		}
		return modulePath + " " + d.Version
	}
	return ""
}
