package trace

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
)

// The bbolt page layout, as far as the pre-walk needs it (bbolt v1.x file
// format: internal/common/page.go).
const (
	pageBranch   = 0x01
	pageLeaf     = 0x02
	elemSize     = 16
	leafIsBucket = 0x01
	maxDepth     = 64
)

// pageWalker walks the B+tree of a bbolt file with plain reads and full
// bounds checks, before bbolt maps the file: bbolt trusts page ids and
// element offsets, so a damaged file could make it read outside the file or
// loop forever on a cycle of pages.
type pageWalker struct {
	f       io.ReaderAt
	ps      uint64
	hwm     uint64
	visited []uint64 // bitset of page ids
	// bufs[d] holds the image of the page at depth d (read while its
	// ancestors' images are still in use), reused from page to page.
	bufs [maxDepth + 1][]byte
}

func (w *pageWalker) seen(id uint64) bool {
	b := &w.visited[id/64]
	if *b&(1<<(id%64)) != 0 {
		return true
	}
	*b |= 1 << (id % 64)
	return false
}

// metaChecksumOK reports whether a meta page's checksum (FNV-64a of the
// meta fields) is right.
func metaChecksumOK(m []byte) bool {
	h := fnv.New64a()
	h.Write(m[:56])
	return h.Sum64() == binary.LittleEndian.Uint64(m[56:])
}

func (w *pageWalker) page(id uint64, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("page tree deeper than %d", maxDepth)
	}
	if id < 2 || id >= w.hwm {
		return fmt.Errorf("page %d beyond the end of the database (%d pages)", id, w.hwm)
	}
	// One read of the page's first ps bytes: its header and, but for a
	// page of more elements than fit there, everything the walk reads of
	// it. Leaves of large values (a trace's blocks) span several pages
	// whose rest holds bytes the walk only bounds-checks.
	buf := w.bufs[depth]
	if uint64(cap(buf)) < w.ps {
		buf = make([]byte, w.ps)
	}
	buf = buf[:w.ps]
	if _, err := w.f.ReadAt(buf, int64(id*w.ps)); err != nil {
		return fmt.Errorf("page %d: %v", id, err)
	}
	if got := binary.LittleEndian.Uint64(buf); got != id {
		return fmt.Errorf("page %d has id %d", id, got)
	}
	overflow := uint64(binary.LittleEndian.Uint32(buf[12:]))
	if overflow >= w.hwm-id {
		return fmt.Errorf("page %d overflows the database", id)
	}
	for i := id; i <= id+overflow; i++ {
		if w.seen(i) {
			return fmt.Errorf("page %d referenced twice", i)
		}
	}
	size := (overflow + 1) * w.ps
	if overflow > 0 && readsPast(buf, size) {
		if uint64(cap(buf)) < size {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		if _, err := w.f.ReadAt(buf, int64(id*w.ps)); err != nil {
			return fmt.Errorf("page %d: %v", id, err)
		}
	}
	w.bufs[depth] = buf
	return w.elems(buf, size, pageName{id: id}, depth)
}

// readsPast reports whether elems, checking a page image of size bytes,
// reads past its first len(p): its element table or a bucket's header.
func readsPast(p []byte, size uint64) bool {
	count := uint64(binary.LittleEndian.Uint16(p[10:]))
	table := 16 + count*elemSize
	if table > size {
		return false // elems refuses the page
	}
	if table > uint64(len(p)) {
		return true
	}
	if binary.LittleEndian.Uint16(p[8:]) != pageLeaf {
		return false
	}
	for i := range count {
		e := p[16+i*elemSize:]
		if binary.LittleEndian.Uint32(e)&leafIsBucket == 0 {
			continue
		}
		end := 16 + i*elemSize + uint64(binary.LittleEndian.Uint32(e[4:])) + uint64(binary.LittleEndian.Uint32(e[8:])) + uint64(binary.LittleEndian.Uint32(e[12:]))
		if end <= size && end > uint64(len(p)) {
			return true
		}
	}
	return false
}

// pageName names a page image in errors: page id, or an inline bucket in it.
type pageName struct {
	id      uint64
	inlines int
}

func (n pageName) String() string {
	return fmt.Sprintf("page %d", n.id) + strings.Repeat(" (inline bucket)", n.inlines)
}

// elems checks the elements of a page image of size bytes (a real or an
// inline page): p is all of it or, for a real page, as much of it as
// holds what the walk reads (readsPast).
func (w *pageWalker) elems(p []byte, size uint64, name pageName, depth int) error {
	if size < 16 {
		return fmt.Errorf("%s: short page", name)
	}
	flags := binary.LittleEndian.Uint16(p[8:])
	count := int(binary.LittleEndian.Uint16(p[10:]))
	if uint64(16+count*elemSize) > size {
		return fmt.Errorf("%s: %d elements overflow the page", name, count)
	}
	// bbolt takes any page without the leaf flag for a branch page, and
	// descends into its element 0 even when it has none: a page without
	// elements that is not a leaf could point anywhere, itself included.
	switch {
	case flags != pageBranch && flags != pageLeaf:
		return fmt.Errorf("%s: not a branch or leaf page (flags %#x)", name, flags)
	case flags == pageBranch && count == 0:
		return fmt.Errorf("%s: a branch page without elements", name)
	}
	for i := 0; i < count; i++ {
		off := 16 + i*elemSize
		e := p[off : off+elemSize]
		switch flags {
		case pageBranch:
			pos, ksize := uint64(binary.LittleEndian.Uint32(e)), uint64(binary.LittleEndian.Uint32(e[4:]))
			if uint64(off)+pos+ksize > size {
				return fmt.Errorf("%s: element %d outside the page", name, i)
			}
			if err := w.page(binary.LittleEndian.Uint64(e[8:]), depth+1); err != nil {
				return err
			}
		case pageLeaf:
			lf := binary.LittleEndian.Uint32(e)
			pos := uint64(binary.LittleEndian.Uint32(e[4:]))
			ksize := uint64(binary.LittleEndian.Uint32(e[8:]))
			vsize := uint64(binary.LittleEndian.Uint32(e[12:]))
			end := uint64(off) + pos + ksize + vsize
			if end > size {
				return fmt.Errorf("%s: element %d outside the page", name, i)
			}
			if lf&leafIsBucket == 0 {
				continue
			}
			v := p[uint64(off)+pos+ksize : end]
			if len(v) < 16 {
				return fmt.Errorf("%s: element %d: short bucket header", name, i)
			}
			if root := binary.LittleEndian.Uint64(v); root != 0 {
				if err := w.page(root, depth+1); err != nil {
					return err
				}
			} else {
				inline := pageName{name.id, name.inlines + 1}
				if err := w.elems(v[16:], uint64(len(v)-16), inline, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// prewalk walks the tree of the newest valid meta page.
func prewalk(f io.ReaderAt, size int64) error {
	var best []byte
	var bestTx uint64
	var ps uint64
	for _, off := range []int64{0, -1} {
		var b [16 + 64]byte
		if off == -1 {
			if ps == 0 {
				ps = 4096
			}
			off = int64(ps)
		}
		if _, err := f.ReadAt(b[:], off); err != nil {
			continue
		}
		m := b[16:]
		if binary.LittleEndian.Uint32(m) != boltMagic || !metaChecksumOK(m) {
			continue
		}
		if off == 0 {
			ps = uint64(binary.LittleEndian.Uint32(m[8:]))
		}
		if tx := binary.LittleEndian.Uint64(m[48:]); best == nil || tx > bestTx {
			best, bestTx = append([]byte(nil), m...), tx
		}
	}
	if best == nil {
		return nil // bbolt's Open reports it
	}
	ps = uint64(binary.LittleEndian.Uint32(best[8:]))
	if ps < 512 || ps > 1<<20 {
		return fmt.Errorf("bad page size %d", ps)
	}
	hwm := binary.LittleEndian.Uint64(best[40:])
	if hwm > uint64(size)/ps {
		return fmt.Errorf("truncated: %d bytes, the database needs %d", size, hwm*ps)
	}
	w := &pageWalker{f: f, ps: ps, hwm: hwm, visited: make([]uint64, hwm/64+1)}
	return w.page(binary.LittleEndian.Uint64(best[16:]), 0)
}
