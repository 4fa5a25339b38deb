package trace

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r     *bytes.Reader
	bytes int64
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	c.bytes += int64(len(p))
	return c.r.ReadAt(p, off)
}

// bigValueDB writes a bbolt file whose bucket "x" holds n values of 16 KiB
// (each a leaf of several pages, like a trace's blocks) and, after the
// last, the inline bucket "y" holding the key "INNERKEY", and returns its
// bytes.
func bigValueDB(t *testing.T, n int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("x"))
		if err != nil {
			return err
		}
		for i := range n {
			v := bytes.Repeat([]byte{byte(i)}, 16<<10)
			if err := b.Put([]byte{'a', byte(i)}, v); err != nil {
				return err
			}
		}
		inner, err := b.CreateBucket([]byte("y"))
		if err != nil {
			return err
		}
		return inner.Put([]byte("INNERKEY"), []byte("v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The walk reads the first page of a leaf of large values, not the pages
// of the values (it only checks their bounds): opening a trace costs a
// read per leaf, not a copy of the file.
func TestPrewalkReadsOnlyTheFirstPageOfLargeValues(t *testing.T) {
	raw := bigValueDB(t, 64)
	c := &countingReaderAt{r: bytes.NewReader(raw)}
	if err := prewalk(c, int64(len(raw))); err != nil {
		t.Fatal(err)
	}
	if c.bytes*4 > int64(len(raw)) {
		t.Errorf("the walk read %d bytes of a %d-byte file in %d reads", c.bytes, len(raw), c.reads)
	}
}

// A bucket stored inline past the first page of its leaf (after a large
// value) is read and checked: damage there is found.
func TestPrewalkChecksAnInlineBucketPastTheFirstPage(t *testing.T) {
	raw := bigValueDB(t, 1)
	if err := prewalk(bytes.NewReader(raw), int64(len(raw))); err != nil {
		t.Fatal(err)
	}
	key := bytes.Index(raw, []byte("INNERKEY"))
	if key < 0 {
		t.Fatal("no inline bucket in the file")
	}
	// The inline page: a 16-byte header and one element before its key.
	inline := key - 16 - elemSize
	const ps = 4096
	leaf := -1
	for id := inline / ps; id >= 2; id-- {
		p := raw[id*ps:]
		if binary.LittleEndian.Uint64(p) == uint64(id) && binary.LittleEndian.Uint16(p[8:]) == pageLeaf {
			leaf = id
			break
		}
	}
	if leaf < 0 || inline-leaf*ps < ps {
		t.Fatalf("the inline bucket (at %d) is not past the first page of its leaf (page %d)", inline, leaf)
	}
	bad := append([]byte(nil), raw...)
	binary.LittleEndian.PutUint16(bad[inline+10:], 0xffff) // element count
	err := prewalk(bytes.NewReader(bad), int64(len(bad)))
	if err == nil || !strings.Contains(err.Error(), "(inline bucket): 65535 elements overflow the page") {
		t.Fatalf("prewalk of the damaged inline bucket = %v", err)
	}
}
