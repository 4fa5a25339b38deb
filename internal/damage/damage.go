package damage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"

	bolt "go.etcd.io/bbolt"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SetHeaderJSON replaces the header of the trace at path with js, with a
// valid checksum: a header that lies but passes the checksum.
func SetHeaderJSON(path, js string) error {
	return update(path, func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		if meta == nil {
			return fmt.Errorf("%s: no meta bucket", path)
		}
		if err := meta.Put([]byte("header"), []byte(js)); err != nil {
			return err
		}
		c := crc32.Checksum([]byte(js), castagnoli)
		return meta.Put([]byte("header_crc32c"), binary.LittleEndian.AppendUint32(nil, c))
	})
}

// AddRankBlock files value as block 0 of rank in the trace at path.
func AddRankBlock(path string, rank uint32, value []byte) error {
	return update(path, func(tx *bolt.Tx) error {
		ranks := tx.Bucket([]byte("ranks"))
		if ranks == nil {
			return fmt.Errorf("%s: no ranks bucket", path)
		}
		b, err := ranks.CreateBucketIfNotExists(binary.BigEndian.AppendUint32(nil, rank))
		if err != nil {
			return err
		}
		return b.Put(make([]byte, 8), value)
	})
}

func update(path string, f func(*bolt.Tx) error) error {
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		return err
	}
	err = db.Update(f)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Case is one damaged copy of a file.
type Case struct {
	Name string
	Data []byte
}

// PageSize is the page size of the traces the writer makes.
const PageSize = 4096

// Mutations returns n damaged copies of sound, drawn with seed: cuts at
// page boundaries and inside pages, single and multiple bit flips, pages
// overwritten with zeros, random bytes or another page. The same seed gives
// the same cases.
func Mutations(sound []byte, seed uint64, n int) []Case {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	pages := len(sound) / PageSize
	out := make([]Case, 0, n)
	for i := 0; i < n; i++ {
		b := append([]byte(nil), sound...)
		var name string
		switch k := i % 6; {
		case k == 0 && pages > 1:
			p := 1 + rng.IntN(pages-1)
			b, name = b[:p*PageSize], fmt.Sprintf("cut at page %d", p)
		case k == 1:
			at := rng.IntN(len(b))
			b, name = b[:at], fmt.Sprintf("cut at byte %d", at)
		case k == 2:
			at := rng.IntN(len(b))
			bit := rng.IntN(8)
			b[at] ^= 1 << bit
			name = fmt.Sprintf("bit %d of byte %d flipped", bit, at)
		case k == 3:
			name = "bits flipped at"
			for j := 0; j < 8; j++ {
				at := rng.IntN(len(b))
				b[at] ^= byte(1 << rng.IntN(8))
				name += fmt.Sprintf(" %d", at)
			}
		case k == 4 && pages > 0:
			p := rng.IntN(pages)
			page := b[p*PageSize : (p+1)*PageSize]
			if rng.IntN(2) == 0 {
				clear(page)
				name = fmt.Sprintf("page %d zeroed", p)
			} else {
				for j := range page {
					page[j] = byte(rng.Uint32())
				}
				name = fmt.Sprintf("page %d overwritten with random bytes", p)
			}
		default:
			if pages < 2 {
				b, name = b[:len(b)/2], "cut in half"
				break
			}
			p, q := rng.IntN(pages), rng.IntN(pages-1)
			if q >= p {
				q++ // another page
			}
			copy(b[p*PageSize:(p+1)*PageSize], sound[q*PageSize:(q+1)*PageSize])
			name = fmt.Sprintf("page %d overwritten with page %d", p, q)
		}
		out = append(out, Case{Name: name, Data: b})
	}
	return out
}
