package trace_test

import (
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

func hashPattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

var hashTestLens = []int{0, 1, 3, 8, 16, 17, 129, 240, 241, 4096, 4097, 5000, 65536, 1<<20 + 13}

// streamedSample is HashSample over XXH64 as the recorders first computed
// it, streaming the runs into a digest: the gathered sample must hash the same.
func streamedSample(b []byte) uint64 {
	if len(b) <= trace.HashSampleBytes {
		return xxhash.Sum64(b) | 1
	}
	d := xxhash.New()
	step := len(b) / (trace.HashSampleBytes / 64)
	for i := 0; i+64 <= len(b); i += step {
		d.Write(b[i : i+64])
	}
	var n [8]byte
	for i := range n {
		n[i] = byte(len(b) >> (8 * i))
	}
	d.Write(n[:])
	return d.Sum64() | 1
}

// TestPayloadHashIsXXH64 pins PayloadHash, the MPI shim's function, for
// every mode: the values of traces on disk and of the shim must not move.
func TestPayloadHashIsXXH64(t *testing.T) {
	for _, n := range hashTestLens {
		b := hashPattern(n)
		if got, want := trace.PayloadHash(trace.HashFull, b), xxhash.Sum64(b)|1; got != want {
			t.Errorf("full, %d bytes: %016x, want %016x", n, got, want)
		}
		if got, want := trace.PayloadHash(trace.HashSample, b), streamedSample(b); got != want {
			t.Errorf("sample, %d bytes: %016x, want %016x", n, got, want)
		}
		if got := trace.PayloadHash(trace.HashOff, b); got != 0 {
			t.Errorf("off, %d bytes: %016x, want 0", n, got)
		}
	}
}

// TestPayloadHasherXXH3 pins the gpu runtime's algorithm to reference
// XXH3-64 values (seed 0) and its sample rule to XXH64's.
func TestPayloadHasherXXH3(t *testing.T) {
	full, err := trace.NewPayloadHasher(trace.HashXXH3, trace.HashFull)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]uint64{"": 0x2d06800538d394c2 | 1, "a": 0xe6c632b61e964e1f | 1} {
		if got := full.Hash([]byte(in)); got != want {
			t.Errorf("xxh3 full of %q: %016x, want %016x", in, got, want)
		}
	}
	sample, err := trace.NewPayloadHasher(trace.HashXXH3, trace.HashSample)
	if err != nil {
		t.Fatal(err)
	}
	small := hashPattern(trace.HashSampleBytes)
	if sample.Hash(small) != full.Hash(small) {
		t.Error("xxh3 sample of a payload of HashSampleBytes is not its full hash")
	}
	big := hashPattern(1<<20 + 13)
	changed := hashPattern(1<<20 + 13)
	changed[10*(len(changed)/64)+1000] ^= 1 // between two sampled runs
	if sample.Hash(big) == full.Hash(big) || sample.Hash(big) != sample.Hash(changed) || full.Hash(big) == full.Hash(changed) {
		t.Error("xxh3 sample of a large payload reads more than the sampled runs")
	}
	for _, n := range hashTestLens {
		if full.Hash(hashPattern(n))&1 == 0 {
			t.Errorf("xxh3 full of %d bytes is even: a stored hash is never 0", n)
		}
	}
}

func TestNewPayloadHasherRefusesUnknown(t *testing.T) {
	if _, err := trace.NewPayloadHasher("md5", trace.HashFull); err == nil {
		t.Error("algorithm md5 accepted")
	}
	if _, err := trace.NewPayloadHasher(trace.HashXXH3, "most"); err == nil {
		t.Error("mode most accepted")
	}
	off, err := trace.NewPayloadHasher(trace.HashXXH3, trace.HashOff)
	if err != nil || !off.Off() || off.Hash([]byte("x")) != 0 {
		t.Errorf("off hasher: %v, Off %v", err, off.Off())
	}
}

// TestHeaderHashAlgorithmOfOldTraces: a header without the field (every
// trace written before it) is XXH64's.
func TestHeaderHashAlgorithmOfOldTraces(t *testing.T) {
	if got := (&trace.Header{}).HashAlgorithm(); got != trace.HashXXH64 {
		t.Errorf("old header: %q, want %q", got, trace.HashXXH64)
	}
	if got := (&trace.Header{HashAlgo: trace.HashXXH3}).HashAlgorithm(); got != trace.HashXXH3 {
		t.Errorf("xxh3 header: %q", got)
	}
}
