package trace

import "github.com/cespare/xxhash/v2"

// Hash modes of a recording (Header.HashMode): how payloads are hashed.
const (
	HashFull   = "full"   // every byte of every payload
	HashSample = "sample" // at most HashSampleBytes spread over the payload
	HashOff    = "off"    // no hashes: in-flight mutations are not seen
)

// HashSampleBytes is how many bytes of a larger payload HashSample reads:
// 64 runs of 64 bytes spread evenly over it.
const HashSampleBytes = 4096

// PayloadHash is the hash a recorder stores for a payload under mode:
// XXH64 of the bytes (HashFull, and HashSample up to HashSampleBytes), of
// evenly spread 64-byte runs and the length (HashSample above it), or 0
// (HashOff). A stored hash is never 0, which means "not hashed". The Go
// runtime's recorder and the MPI shim (C) compute the same values: a test
// of recorder/mpi compares them.
func PayloadHash(mode string, b []byte) uint64 {
	switch mode {
	case HashOff:
		return 0
	case HashSample:
		if len(b) > HashSampleBytes {
			d := xxhash.New()
			step := len(b) / (HashSampleBytes / 64)
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
	}
	return xxhash.Sum64(b) | 1
}

// Mutated is the rule of an in-flight mutation: a send whose payload hash
// at post and at completion were both recorded and differ (the program
// wrote the buffer while the runtime could still read it).
func Mutated(hashPost, hashDone uint64) bool {
	return hashPost != 0 && hashDone != 0 && hashPost != hashDone
}
