package trace

import (
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/xxh3"
)

// Hash modes of a recording (Header.HashMode): how payloads are hashed.
const (
	HashFull   = "full"   // every byte of every payload
	HashSample = "sample" // at most HashSampleBytes spread over the payload
	HashOff    = "off"    // no hashes: in-flight mutations are not seen
)

// Hash algorithms of a recording (Header.HashAlgo): the function its payload
// hashes were taken with. Hashes are only ever compared within one trace
// (a send's at post and at completion, a send's and its receive's, a
// stored payload's key), so each recorder may use its own; the header says
// which, and readers that recompute a hash must use HashAlgorithm's.
const (
	// HashXXH64 is XXH64 (seed 0): the MPI shim's, and every trace's
	// written before the header named its algorithm.
	HashXXH64 = "xxh64"
	// HashXXH3 is XXH3-64 (seed 0): the gpu runtime's. It reads a 1 MiB
	// payload four times as fast as XXH64 (vector code), which keeps a
	// full-hash recording of large transfers under twice an unrecorded run.
	HashXXH3 = "xxh3"
	// HashBLAKE2b is BLAKE2b with an 8-byte digest, read little-endian:
	// the Python recorder's (hashlib, the standard library, has no xxHash).
	// No Go code recomputes it: NewPayloadHasher refuses it.
	HashBLAKE2b = "blake2b-64"
)

// HashAlgorithm is the algorithm of h's payload hashes: HashXXH64 for a
// trace that names none (written before the field).
func (h *Header) HashAlgorithm() string {
	if h.HashAlgo == "" {
		return HashXXH64
	}
	return h.HashAlgo
}

// HashSampleBytes is how many bytes of a larger payload HashSample reads:
// 64 runs of 64 bytes spread evenly over it.
const HashSampleBytes = 4096

const (
	sampleRun  = 64
	sampleRuns = HashSampleBytes / sampleRun
)

// PayloadHash is the hash a recorder stores for a payload under mode, with
// HashXXH64: XXH64 of the bytes (HashFull, and HashSample up to
// HashSampleBytes), of evenly spread 64-byte runs and the length
// (HashSample above it), or 0 (HashOff). A stored hash is never 0, which
// means "not hashed". The MPI shim (C) computes the same values: a test of
// recorder/mpi compares them.
func PayloadHash(mode string, b []byte) uint64 {
	h, err := NewPayloadHasher(HashXXH64, mode)
	if err != nil {
		h, _ = NewPayloadHasher(HashXXH64, HashFull)
	}
	return h.Hash(b)
}

// PayloadHasher hashes payloads under one mode with one algorithm, as
// PayloadHash does for HashXXH64. The zero value hashes nothing (HashOff).
type PayloadHasher struct {
	xxh3   bool
	on     bool // not HashOff
	sample bool
}

// NewPayloadHasher returns the hasher of algo (HashXXH64 or HashXXH3) and
// mode (HashFull, HashSample or HashOff).
func NewPayloadHasher(algo, mode string) (PayloadHasher, error) {
	h := PayloadHasher{on: true}
	switch algo {
	case HashXXH64:
	case HashXXH3:
		h.xxh3 = true
	default:
		return PayloadHasher{}, fmt.Errorf("payload hash algorithm %q: want %s or %s", algo, HashXXH64, HashXXH3)
	}
	switch mode {
	case HashFull:
	case HashSample:
		h.sample = true
	case HashOff:
		h.on = false
	default:
		return PayloadHasher{}, fmt.Errorf("hash mode %q: want %s, %s or %s", mode, HashFull, HashSample, HashOff)
	}
	return h, nil
}

// Off reports whether h hashes nothing (HashOff).
func (h PayloadHasher) Off() bool { return !h.on }

// Hash is b's payload hash: never 0, or 0 under HashOff.
func (h PayloadHasher) Hash(b []byte) uint64 {
	if !h.on {
		return 0
	}
	if h.sample && len(b) > HashSampleBytes {
		var buf [HashSampleBytes + 8]byte
		return h.sum(sampled(b, &buf)) | 1
	}
	return h.sum(b) | 1
}

// sum is the algorithm's hash of b. (A switch, not a func value: an
// indirect call would move the sample buffer to the heap.)
func (h PayloadHasher) sum(b []byte) uint64 {
	if h.xxh3 {
		return xxh3.Hash(b)
	}
	return xxhash.Sum64(b)
}

// sampled is what HashSample hashes of a payload larger than
// HashSampleBytes: 64 runs of 64 bytes evenly spread over it, then its
// length (8 bytes, little-endian), gathered into buf.
func sampled(b []byte, buf *[HashSampleBytes + 8]byte) []byte {
	step := len(b) / sampleRuns // >= sampleRun: every run lies inside b
	for k := range sampleRuns {
		copy(buf[k*sampleRun:(k+1)*sampleRun], b[k*step:])
	}
	for i := range 8 {
		buf[HashSampleBytes+i] = byte(len(b) >> (8 * i))
	}
	return buf[:]
}

// Mutated is the rule of an in-flight mutation: a send whose payload hash
// at post and at completion were both recorded and differ (the program
// wrote the buffer while the runtime could still read it).
func Mutated(hashPost, hashDone uint64) bool {
	return hashPost != 0 && hashDone != 0 && hashPost != hashDone
}
