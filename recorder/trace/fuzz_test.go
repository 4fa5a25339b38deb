package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// seedTrace writes a small finished trace (sites, a payload, three ranks)
// and returns its bytes.
func seedTrace(f *testing.F) []byte {
	path := filepath.Join(f.TempDir(), "seed.p2ptrace")
	w, err := Create(path, Header{WorldSize: 3, Command: []string{"ring"}}, WriterOptions{NoSync: true, BlockSize: 512})
	if err != nil {
		f.Fatal(err)
	}
	w.AddSite(Site{ID: 1, Function: "main.f", File: "a.go", Line: 3})
	w.AddPayload(7, []byte("payload"))
	for r := int32(0); r < 3; r++ {
		evs := ringEvents(r, 3, 40)
		for i := range evs {
			w.Append(&evs[i])
		}
	}
	if err := w.Close(StatusComplete, ""); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzPrecheck feeds the raw-file checks that run before bbolt maps a file
// (meta pages, freelist, the page-tree walk) arbitrary bytes, in memory:
// errors, never a panic or a hang.
func FuzzPrecheck(f *testing.F) {
	b := seedTrace(f)
	f.Add(b)
	f.Add(b[:2*4096])
	f.Add([]byte("not a trace"))
	f.Fuzz(func(t *testing.T, data []byte) {
		precheckBytes("fuzz", bytes.NewReader(data), int64(len(data)))
	})
}

// FuzzDecodeSite: a site record decodes or is refused, and what decodes
// encodes to a record that decodes the same (not always to the same bytes:
// an overlong uvarint decodes too).
func FuzzDecodeSite(f *testing.F) {
	f.Add(encodeSite(Site{ID: 1, Function: "main.f", File: "a.go", Line: 3}))
	f.Add(encodeSite(Site{}))
	f.Fuzz(func(t *testing.T, v []byte) {
		s, err := decodeSite(1, v)
		if err != nil {
			return
		}
		if got, err := decodeSite(1, encodeSite(s)); err != nil || got != s {
			t.Fatalf("site %+v re-decodes to %+v, %v", s, got, err)
		}
	})
}
