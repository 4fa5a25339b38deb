package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/p2ptrace/p2ptrace/internal/regfile"
)

// guard runs f, turning a panic or a memory fault (a damaged file mapped
// into memory) into an error.
func guard(f func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errPanicked, r)
		}
	}()
	return f()
}

var errPanicked = errors.New("reading the file failed")

// Reader reads a trace. A Reader and its Cursors must be used from one
// goroutine at a time.
type Reader struct {
	path    string
	db      *bolt.DB
	tx      *bolt.Tx
	hdr     Header // strings made Printable: what callers see
	raw     Header // as stored: what UpdateHeader rewrites
	sites   []Site // sorted by ID, strings made Printable
	ranks   int
	rankIDs []int // ranks with a bucket, ascending
	forked  bool  // a Fork: Close ends its transaction, not the file
}

func damaged(path, format string, args ...any) error {
	return fmt.Errorf("trace %s: %w: %s", path, ErrDamaged, fmt.Sprintf(format, args...))
}

func notTrace(path, why string) error {
	return fmt.Errorf("%s: %w: %s", path, ErrNotTrace, why)
}

// bbolt file layout used by the pre-checks.
const (
	boltMagic      = 0xED0CDAED
	boltMetaFlag   = 0x04
	boltPageHeader = 16
	noFreelist     = math.MaxUint64
)

type boltMeta struct {
	ok                   bool
	pageSize             uint32
	freelist, pgid, txid uint64
}

// readMeta parses the meta page at off of the file.
func readMeta(f io.ReaderAt, off int64) (boltMeta, bool) {
	var b [boltPageHeader + 64]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return boltMeta{}, false
	}
	flags := binary.LittleEndian.Uint16(b[8:])
	m := b[boltPageHeader:]
	if flags&boltMetaFlag == 0 || binary.LittleEndian.Uint32(m) != boltMagic {
		return boltMeta{}, false
	}
	// bbolt's own check: FNV-64a of the meta's fields before the checksum.
	h := fnv.New64a()
	h.Write(m[:56])
	if h.Sum64() != binary.LittleEndian.Uint64(m[56:]) {
		return boltMeta{}, false
	}
	return boltMeta{
		ok:       true,
		pageSize: binary.LittleEndian.Uint32(m[8:]),
		freelist: binary.LittleEndian.Uint64(m[32:]),
		pgid:     binary.LittleEndian.Uint64(m[40:]),
		txid:     binary.LittleEndian.Uint64(m[48:]),
	}, true
}

// precheck looks at the raw file before bbolt maps it: that it is a bbolt
// file, and that the pages its meta pages point at lie inside the file.
// It returns the file open and share-locked (see lockShared): the caller
// closes it once bbolt holds its own lock.
func precheck(path string) (*os.File, error) {
	f, err := regfile.Open(path)
	if err != nil {
		if errors.Is(err, regfile.ErrNotRegular) {
			return nil, bothErr{err, ErrNotTrace}
		}
		return nil, fmt.Errorf("open trace: %w", err)
	}
	if err := lockShared(f, DefaultLockTimeout); err != nil {
		f.Close()
		return nil, err
	}
	if err := precheckFile(path, f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func precheckFile(path string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open trace: %w", err)
	}
	return precheckBytes(path, f, fi.Size())
}

// precheckBytes checks the bbolt structure of the size bytes of f (a file,
// or memory in the fuzz tests).
func precheckBytes(path string, f io.ReaderAt, size int64) error {
	if size == 0 {
		return notTrace(path, "the file is empty")
	}
	m0, ok0 := readMeta(f, 0)
	var m1 boltMeta
	ok1 := false
	for _, ps := range []int64{int64(m0.pageSize), 4096, 8192, 16384, 65536} {
		if ps > 0 && ps <= 1<<20 {
			if m1, ok1 = readMeta(f, ps); ok1 {
				break
			}
		}
	}
	if !ok0 && !ok1 {
		var head [64]byte
		n, _ := f.ReadAt(head[:], 0)
		if size < 4096 && n > 0 && strings.HasPrefix(string(head[:n]), "\x00") {
			return damaged(path, "truncated to %d bytes", size)
		}
		return notTrace(path, "not a bbolt database")
	}
	// bbolt uses the valid meta of the later transaction; the other one
	// describes an older state whose freed pages may since hold other data
	// (a writer killed between commits leaves exactly that).
	if ok0 && ok1 {
		if m0.txid >= m1.txid {
			m1.ok = false
		} else {
			m0.ok = false
		}
	}
	for _, m := range []boltMeta{m0, m1} {
		if !m.ok || m.pageSize < 512 || m.pageSize > 1<<20 {
			continue
		}
		ps := uint64(m.pageSize)
		if m.pgid > uint64(size)/ps {
			return damaged(path, "truncated: %d bytes, the database needs %d", size, m.pgid*ps)
		}
		if m.freelist == noFreelist {
			continue
		}
		if m.freelist >= m.pgid {
			return damaged(path, "freelist page %d beyond the end of the database", m.freelist)
		}
		var ph [boltPageHeader + 8]byte
		if _, err := f.ReadAt(ph[:], int64(m.freelist*ps)); err != nil {
			return damaged(path, "cannot read the freelist page: %v", err)
		}
		count := uint64(binary.LittleEndian.Uint16(ph[10:]))
		overflow := uint64(binary.LittleEndian.Uint32(ph[12:]))
		room := (overflow+1)*ps - boltPageHeader
		if m.freelist+overflow >= m.pgid {
			return damaged(path, "freelist pages beyond the end of the database")
		}
		if count == 0xFFFF {
			count = binary.LittleEndian.Uint64(ph[16:]) + 1
		}
		if count > room/8 {
			return damaged(path, "freelist overflows its pages")
		}
	}
	if err := prewalk(f, size); err != nil {
		return damaged(path, "%v", err)
	}
	return nil
}

// Open opens the trace at path for reading (read-only, shared lock). It
// checks the bbolt structure, the magic and the format version.
func Open(path string) (*Reader, error) {
	pre, err := precheck(path)
	if err != nil {
		return nil, err
	}
	// Hold the pre-check's lock until bbolt holds its own: no writer can
	// start in between.
	defer pre.Close()
	r := &Reader{path: path}
	err = guard(func() error {
		db, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: DefaultLockTimeout})
		if err != nil {
			switch {
			case errors.Is(err, berrors.ErrTimeout):
				return lockedError(path)
			case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch):
				return notTrace(path, "not a bbolt database ("+err.Error()+")")
			}
			return damaged(path, "%v", err)
		}
		r.db = db
		tx, err := db.Begin(false)
		if err != nil {
			return damaged(path, "%v", err)
		}
		r.tx = tx
		return nil
	})
	if err != nil {
		r.Close()
		if errors.Is(err, errPanicked) {
			err = damaged(path, "%v", err)
		}
		return nil, err
	}
	if err := r.load(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) load() error {
	path := r.path
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("open trace: %w", err)
	}
	if fi.Size() < r.tx.Size() {
		return damaged(path, "truncated: %d bytes, the database needs %d", fi.Size(), r.tx.Size())
	}
	var magic, hj, hcrc []byte
	err = guard(func() error {
		// Touch every page we will use, in this goroutine, before bbolt's
		// own check (which runs in a goroutine of its own) does.
		if err := r.walk(); err != nil {
			return err
		}
		meta := r.tx.Bucket(bucketMeta)
		if meta == nil {
			return notTrace(path, "a bbolt database without the p2ptrace meta bucket")
		}
		magic = append([]byte(nil), meta.Get(keyMagic)...)
		hj = append([]byte(nil), meta.Get(keyHeader)...)
		hcrc = append([]byte(nil), meta.Get(keyHeaderCRC)...)
		return nil
	})
	if err != nil {
		if errors.Is(err, errPanicked) {
			err = damaged(path, "%v", err)
		}
		return err
	}
	if string(magic) != Magic {
		return notTrace(path, "a bbolt database without the p2ptrace magic")
	}
	if err := r.check(); err != nil {
		return err
	}
	if len(hj) == 0 {
		return damaged(path, "the header is missing")
	}
	if len(hcrc) != 4 || binary.LittleEndian.Uint32(hcrc) != crc32.Checksum(hj, castagnoli) {
		return damaged(path, "the header fails its checksum")
	}
	if err := json.Unmarshal(hj, &r.raw); err != nil {
		return damaged(path, "the header is not valid JSON: %v", err)
	}
	// Escaped here, where strings leave the file, so that every renderer
	// (show, replay and check reports, export) prints them safely.
	r.hdr = r.raw.printable()
	if r.hdr.FormatVersion > FormatVersion {
		return fmt.Errorf("%s: %w: trace format version %d is newer than this p2ptrace supports (%d); upgrade p2ptrace",
			path, ErrNewerVersion, r.hdr.FormatVersion, FormatVersion)
	}
	if r.hdr.FormatVersion < 1 {
		return damaged(path, "bad format version %d in the header", r.hdr.FormatVersion)
	}
	if r.hdr.FindingsVersion > verdict.Version {
		return fmt.Errorf("%s: %w: its recorded findings are of version %d, newer than this p2ptrace supports (%d); upgrade p2ptrace",
			path, ErrNewerVersion, r.hdr.FindingsVersion, verdict.Version)
	}
	if r.hdr.WorldSize < 0 || r.hdr.WorldSize > maxRank {
		return damaged(path, "bad world size %d in the header", r.hdr.WorldSize)
	}
	err = guard(func() error {
		if sb := r.tx.Bucket(bucketSites); sb != nil {
			if err := sb.ForEach(func(k, v []byte) error {
				if len(k) != 4 {
					return damaged(path, "bad site key %x", k)
				}
				s, err := decodeSite(binary.BigEndian.Uint32(k), v)
				if err != nil {
					return damaged(path, "site %d: %v", binary.BigEndian.Uint32(k), err)
				}
				s.File, s.Function = Printable(s.File), Printable(s.Function)
				r.sites = append(r.sites, s)
				return nil
			}); err != nil {
				return err
			}
		}
		r.ranks = r.hdr.WorldSize
		rb := r.tx.Bucket(bucketRanks)
		if rb == nil {
			return damaged(path, "the ranks bucket is missing")
		}
		{
			return rb.ForEachBucket(func(k []byte) error {
				if len(k) != 4 || binary.BigEndian.Uint32(k) >= maxRank {
					return damaged(path, "bad rank bucket key %x", k)
				}
				r.ranks = max(r.ranks, int(binary.BigEndian.Uint32(k))+1)
				r.rankIDs = append(r.rankIDs, int(binary.BigEndian.Uint32(k)))
				return nil
			})
		}
	})
	if err != nil && errors.Is(err, errPanicked) {
		err = damaged(path, "%v", err)
	}
	if err == nil {
		err = r.checkRanks(fi.Size())
	}
	sort.Slice(r.sites, func(i, j int) bool { return r.sites[i].ID < r.sites[j].ID })
	return err
}

// maxCutRanks bounds the ranks of a trace cut short, whose header does not
// count its ranks yet: every reader allocates per rank, so a small file must
// not claim millions of them.
func maxCutRanks(size int64) int { return 1024 + int(min(size/16, maxRank)) }

// checkRanks bounds the number of ranks by what the file holds: a finished
// trace's header counts the events of every rank (rank_events, at least two
// bytes each), a cut one may claim a little more than its size.
func (r *Reader) checkRanks(size int64) error {
	h := &r.hdr
	if h.Status != StatusRunning {
		if h.WorldSize > len(h.RankEvents) {
			return damaged(r.path, "inconsistent header: %d ranks, but rank_events counts %d", h.WorldSize, len(h.RankEvents))
		}
		if n := len(r.rankIDs); n > 0 && r.rankIDs[n-1] >= len(h.RankEvents) {
			return damaged(r.path, "inconsistent header: events of rank %d, but rank_events counts %d ranks", r.rankIDs[n-1], len(h.RankEvents))
		}
		return nil
	}
	if limit := maxCutRanks(size); r.ranks > limit {
		return damaged(r.path, "inconsistent header: %d ranks in a cut trace of %d bytes (at most %d)", r.ranks, size, limit)
	}
	return nil
}

// walk visits every bucket, key and value (the last byte of each value).
func (r *Reader) walk() error {
	var sink byte
	var visit func(b *bolt.Bucket, depth int) error
	visit = func(b *bolt.Bucket, depth int) error {
		if depth > 4 {
			return damaged(r.path, "buckets nested too deep")
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				sub := b.Bucket(k)
				if sub == nil {
					return damaged(r.path, "bucket %q unreadable", k)
				}
				if err := visit(sub, depth+1); err != nil {
					return err
				}
				continue
			}
			if len(v) > 0 {
				sink ^= v[len(v)-1]
			}
		}
		return nil
	}
	err := r.tx.ForEach(func(name []byte, b *bolt.Bucket) error { return visit(b, 0) })
	_ = sink
	return err
}

// check runs bbolt's consistency check.
func (r *Reader) check() error {
	var errs []string
	done := make(chan struct{})
	ch := r.tx.Check()
	go func() {
		defer close(done)
		for err := range ch {
			if len(errs) < 10 {
				errs = append(errs, err.Error())
			}
		}
	}()
	<-done
	if len(errs) > 0 {
		return damaged(r.path, "bbolt check: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Fork returns a Reader of the same trace, checked and opened, with a read
// transaction of its own: a Reader and its Cursors are for one goroutine
// at a time, a Fork lets another goroutine read at the same time (a
// replay's decoder, ahead of the engine). Close the Fork before r: r's
// Close waits for the Forks' transactions to end.
func (r *Reader) Fork() (*Reader, error) {
	f := *r
	f.forked = true
	f.tx = nil
	if r.tx == nil {
		return nil, fmt.Errorf("trace %s: %w", r.path, ErrClosed)
	}
	err := guard(func() error {
		tx, err := r.db.Begin(false)
		if err != nil {
			return err
		}
		f.tx = tx
		return nil
	})
	if err != nil {
		return nil, damagedIfPanic(r.path, err)
	}
	return &f, nil
}

// Close releases the file (a Fork: its transaction).
func (r *Reader) Close() error {
	if r == nil {
		return nil
	}
	var err error
	if r.tx != nil {
		guard(func() error { return r.tx.Rollback() })
		r.tx = nil
	}
	if r.forked {
		return nil
	}
	if r.db != nil {
		err = r.db.Close()
		r.db = nil
	}
	return err
}

// Path is the file the Reader reads.
func (r *Reader) Path() string { return r.path }

// Header returns the trace header.
func (r *Reader) Header() Header { return r.hdr }

// Incomplete reports whether the recording was cut short: its status is
// still running.
func (r *Reader) Incomplete() bool { return r.hdr.Status == StatusRunning }

// Ranks is the number of ranks: the header's world size, or more if the
// trace has events of higher ranks.
func (r *Reader) Ranks() int { return r.ranks }

// Sites returns the call-site table sorted by ID.
func (r *Reader) Sites() []Site { return append([]Site(nil), r.sites...) }

// Site returns the site with the given ID.
func (r *Reader) Site(id uint32) (Site, bool) {
	i := sort.Search(len(r.sites), func(i int) bool { return r.sites[i].ID >= id })
	if i < len(r.sites) && r.sites[i].ID == id {
		return r.sites[i], true
	}
	return Site{}, false
}

// Payload returns the stored payload of hash (a copy), if any and intact.
func (r *Reader) Payload(hash uint64) ([]byte, bool) {
	if r.tx == nil {
		return nil, false
	}
	var out []byte
	err := guard(func() error {
		pb := r.tx.Bucket(bucketPayloads)
		if pb == nil {
			return nil
		}
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], hash)
		v := pb.Get(k[:])
		if len(v) < 4 || crc32.Checksum(v[4:], castagnoli) != binary.LittleEndian.Uint32(v) {
			return nil
		}
		out = append([]byte{}, v[4:]...)
		return nil
	})
	return out, err == nil && out != nil
}

func (r *Reader) rankBucket(rank int) (*bolt.Bucket, error) {
	var b *bolt.Bucket
	err := guard(func() error {
		if r.tx == nil {
			return fmt.Errorf("trace %s: %w", r.path, ErrClosed)
		}
		rb := r.tx.Bucket(bucketRanks)
		if rb == nil || rank < 0 || rank > math.MaxUint32 {
			return nil
		}
		var k [4]byte
		binary.BigEndian.PutUint32(k[:], uint32(rank))
		b = rb.Bucket(k[:])
		return nil
	})
	return b, err
}

// Cursor streams the events of one rank in order.
//
// It decodes a block through a small window: a copy of the block's next
// KiB (windowSize), refilled from the file's mapping as the decoder
// reaches its end. A copy of the whole block (16 KiB) in every cursor made
// a replay hold the trace once more, as a rank's record is often one
// block; a window holds about windowSize bytes per rank. The mapping is
// read only under guard (the file may shrink under it), and a block's
// checksum is checked on the mapping before any of its events is decoded.
type Cursor struct {
	r       *Reader
	rank    int
	bc      *bolt.Cursor
	started bool
	index   uint64 // of the next block
	rest    []byte // the block's bytes past the window, in the mapping
	buf     []byte // the window, whose undecoded bytes are dec.data[dec.pos:]
	dec     decoder
	inBlock bool
	err     error
	done    bool
}

// windowSize is the size of a Cursor's window. When an event is cut by the
// window's end (its decoding fails, or the block's count is reached before
// the window's end, with more of the block past it), the window is
// refilled from where that event starts, and the event decoded again
// (see windowEnd).
const windowSize = 1024

// Rank returns a cursor over the events of rank r (none if the rank has no events).
func (r *Reader) Rank(rank int) *Cursor {
	c := &Cursor{r: r, rank: rank}
	b, err := r.rankBucket(rank)
	if err != nil {
		c.err = damagedIfPanic(r.path, err)
		c.done = true
		return c
	}
	if b == nil {
		c.done = true
		return c
	}
	c.bc = b.Cursor()
	return c
}

func damagedIfPanic(path string, err error) error {
	if errors.Is(err, errPanicked) {
		return damaged(path, "%v", err)
	}
	return err
}

// Next decodes the next event into ev, reusing the capacity of ev.Reqs. It
// returns false at the end of the rank or on an error (see Err).
func (c *Cursor) Next(ev *Event) bool { return c.next(ev) != nil }

// NextRef decodes the next event in place and returns it: the event, its
// Reqs included, is the cursor's, to read and not to change, and stays
// valid until the cursor's next call. It saves Next's copy of the whole
// event (some 240 bytes) for a reader that reads a few of its fields and
// keeps none (a replay's decoder, which converts each event to its own
// form). It returns nil at the end of the rank or on an error (see Err).
func (c *Cursor) NextRef() *Event { return c.next(nil) }

// NextPost is NextRef for a reader that leaves out every Done event,
// up to maxSkip of them in a row: it skips the Done events before the next
// post, at most maxSkip, and returns the event after them in full, as
// NextRef (a post, or the Done after maxSkip skipped), or nil at the end
// of the rank or on an error (see Err). It also returns how many it
// skipped and the last skipped one's Seq and Op. Skipping in the cursor
// saves a call and a reader's loop per Done event left out: each call of
// a trace has one.
func (c *Cursor) NextPost(maxSkip int) (ev *Event, skipped int, lastSeq uint64, lastOp Op) {
	d := &c.dec
	d.skip = skipState{left: maxSkip}
	reqs := d.reqs[:0]
	var t *Event
	var err error
	if c.inBlock {
		t, err = d.decode(reqs)
	}
	if t == nil {
		t = c.windowEnd(reqs, err)
	}
	if t != nil {
		d.reqs = t.Reqs
	}
	sk := d.skip // end (the rank's) keeps it
	d.skip.left = 0
	return t, sk.n, sk.lastSeq, sk.lastOp
}

// next decodes the next event: into ev, or, if ev is nil, in place (see
// decoder.decode), and returns it, or nil.
func (c *Cursor) next(ev *Event) *Event {
	reqs := c.dec.reqs[:0]
	if ev != nil {
		reqs = ev.Reqs[:0]
	}
	var t *Event
	var err error
	if c.inBlock {
		t, err = c.dec.decode(reqs)
	}
	if t == nil {
		t = c.windowEnd(reqs, err)
	}
	switch {
	case t == nil:
		return nil
	case ev != nil:
		*ev = *t
		return ev
	default:
		c.dec.reqs = t.Reqs
	}
	return t
}

// windowEnd is next when decoding from the window gave no event (err, or
// none left in the block), or no block is being decoded. At the window's
// end, with more of the block past it, the event at dec.pos is decoded
// again from a window refilled from there (twice as large when the event
// alone filled the window); at the block's end, the next block's first
// event.
//
// Decoding again is sound: a failed decode changes no state of the decoder
// that decoding the same event again does not set the same way, and an
// event cut short cannot decode (every field it has must be read).
func (c *Cursor) windowEnd(reqs []uint64, err error) *Event {
	var t *Event
	var from []byte
	if c.inBlock {
		// Where the event starts: a failed decode leaves dec.pos there.
		from = c.buf[c.dec.pos:]
	}
	for {
		if c.inBlock {
			for len(c.rest) > 0 {
				if !c.refill(from, max(windowSize-len(from), len(from))) {
					return nil
				}
				if t, err = c.dec.decode(reqs); t != nil {
					return t
				}
				// Where the event cut now starts: past the Done events a
				// NextPost skipped before it, up to a window of them.
				from = c.dec.data[c.dec.pos:]
			}
			if err != nil {
				c.fail(fmt.Errorf("block %d: %v", c.index-1, err))
				return nil
			}
			c.inBlock = false
		}
		if c.done || !c.nextBlock() {
			return nil
		}
		if t, err = c.dec.decode(reqs); t != nil {
			return t
		}
		from = c.dec.data[c.dec.pos:]
	}
}

func (c *Cursor) fail(err error) {
	c.err = damaged(c.r.path, "rank %d: %v", c.rank, err)
	c.end()
}

// end stops the cursor and lets go of what it holds: a replay keeps the
// cursors of every rank until its end, and ranks end at different times.
func (c *Cursor) end() {
	c.done = true
	c.inBlock = false
	c.bc, c.rest, c.buf = nil, nil, nil
	c.dec = decoder{skip: c.dec.skip}
}

// stopped ends the cursor on err, from reading the mapping: the reader
// closed, or the file damaged.
func (c *Cursor) stopped(err error) {
	if errors.Is(err, ErrClosed) {
		c.err = err
		c.end()
	} else {
		c.fail(err)
	}
}

// refill makes the window from (a suffix of the window, not yet decoded)
// followed by up to more bytes of the block from the mapping, and decodes
// on from there.
func (c *Cursor) refill(from []byte, more int) bool {
	n := len(from)
	more = min(more, len(c.rest))
	if cap(c.buf) < n+more {
		buf := make([]byte, n+more)
		copy(buf, from)
		c.buf = buf
	} else {
		copy(c.buf[:n], from)
		c.buf = c.buf[:n+more]
	}
	err := guard(func() error {
		if c.r.tx == nil {
			return fmt.Errorf("trace %s: %w", c.r.path, ErrClosed)
		}
		copy(c.buf[n:], c.rest[:more])
		return nil
	})
	if err != nil {
		c.stopped(err)
		return false
	}
	c.rest = c.rest[more:]
	c.dec.data, c.dec.pos = c.buf, 0
	return true
}

// nextBlock checks the next block in the file's mapping and starts
// decoding it through the window.
func (c *Cursor) nextBlock() bool {
	end := false
	err := guard(func() error {
		if c.r.tx == nil {
			return fmt.Errorf("trace %s: %w", c.r.path, ErrClosed)
		}
		var k, v []byte
		if !c.started {
			k, v = c.bc.First()
			c.started = true
		} else {
			k, v = c.bc.Next()
		}
		if k == nil {
			end = true
			return nil
		}
		if v == nil {
			return fmt.Errorf("block key %x is a bucket", k)
		}
		if len(k) != 8 {
			return fmt.Errorf("bad block key %x", k)
		}
		if idx := binary.BigEndian.Uint64(k); idx != c.index {
			return fmt.Errorf("block %d missing (next block is %d)", c.index, idx)
		}
		c.index++
		rank, n, body, err := blockInfo(v)
		if err != nil {
			return fmt.Errorf("block %d: %v", c.index-1, err)
		}
		if int(rank) != c.rank {
			return fmt.Errorf("block %d belongs to rank %d", c.index-1, rank)
		}
		// The first window; a window grown for a long event is not kept.
		w := min(len(body), windowSize)
		if cap(c.buf) < w || cap(c.buf) > windowSize {
			c.buf = make([]byte, w, min(len(body), windowSize))
		}
		c.buf = c.buf[:w]
		copy(c.buf, body)
		c.rest = body[w:]
		c.dec.begin(rank, n, c.buf)
		return nil
	})
	if err != nil {
		c.stopped(err)
		return false
	}
	if end {
		c.end()
		return false
	}
	c.inBlock = true
	return true
}

// Err returns the error that stopped Next, if any (nil at a clean end).
func (c *Cursor) Err() error { return c.err }

// Blocks is the number of blocks the cursor has read so far.
func (c *Cursor) Blocks() int64 { return int64(c.index) }

// VerifyResult summarizes a sound trace.
type VerifyResult struct {
	Events int64
	Blocks int64
}

// Verify checks the whole trace: every block's checksum and decoding, and,
// when the recording ended (status not running), the event count of every
// rank against the header. The error lists what is damaged and wraps
// ErrDamaged.
func (r *Reader) Verify() error {
	_, err := r.VerifyResult()
	return err
}

// VerifyResult is Verify that also counts events and blocks.
func (r *Reader) VerifyResult() (VerifyResult, error) {
	var res VerifyResult
	if r.tx == nil {
		return res, fmt.Errorf("trace %s: %w", r.path, ErrClosed)
	}
	var problems []string
	if err := r.check(); err != nil {
		problems = append(problems, err.Error())
	}
	final := r.hdr.Status != StatusRunning
	var ev Event
	counts := map[int]int64{}
	for _, rank := range r.rankIDs {
		c := r.Rank(rank)
		var n int64
		for c.Next(&ev) {
			n++
		}
		res.Blocks += c.Blocks()
		res.Events += n
		counts[rank] = n
		if err := c.Err(); err != nil {
			problems = append(problems, strings.TrimPrefix(err.Error(), "trace "+r.path+": "+ErrDamaged.Error()+": "))
		}
	}
	if final && len(problems) == 0 {
		for rank, want := range r.hdr.RankEvents {
			if counts[rank] != want {
				problems = append(problems, fmt.Sprintf("rank %d: %d events, the header says %d", rank, counts[rank], want))
			}
		}
		for _, rank := range r.rankIDs {
			if rank >= len(r.hdr.RankEvents) {
				problems = append(problems, fmt.Sprintf("rank %d: %d events, not in the header", rank, counts[rank]))
			}
		}
		if res.Events != r.hdr.Events {
			problems = append(problems, fmt.Sprintf("%d events, the header says %d", res.Events, r.hdr.Events))
		}
	}
	if len(problems) > 0 {
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("and %d more", len(problems)-20))
		}
		return res, fmt.Errorf("trace %s: %w: %s", r.path, ErrDamaged, strings.Join(problems, "; "))
	}
	return res, nil
}
