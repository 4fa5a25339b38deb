package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/p2ptrace/p2ptrace/internal/regfile"
)

// Defaults of WriterOptions.
const (
	DefaultPayloadCap    = 64 << 10
	DefaultPayloadBudget = 256 << 20
	DefaultBlockSize     = 4*4096 - 64 - 512 // fits four bbolt pages with the page and element headers
	DefaultFlushInterval = 100 * time.Millisecond
	DefaultLockTimeout   = time.Second
	maxPendingBytes      = 64 << 20
	maxBlockEvents       = 1 << 16
	maxRank              = 1 << 24
)

// WriterOptions tune a Writer. The zero value is the recommended setting.
type WriterOptions struct {
	// Force replaces an existing file (unless another process holds it).
	Force bool
	// PayloadCap is the largest payload AddPayload stores, in bytes
	// (0: DefaultPayloadCap; negative: store no payloads).
	PayloadCap int
	// PayloadBudget caps the total bytes of stored payloads (0: DefaultPayloadBudget).
	PayloadBudget int64
	// BlockSize is the encoded size at which a rank's block is written
	// (0: DefaultBlockSize).
	BlockSize int
	// FlushInterval bounds how long an appended event stays in memory
	// (0: DefaultFlushInterval). A killed recorder loses at most about that much.
	FlushInterval time.Duration
	// LockTimeout is how long Create waits for the file lock (0: DefaultLockTimeout).
	LockTimeout time.Duration
	// NoSync skips fsync on each write transaction. A killed process loses
	// nothing more (the data is in the page cache), a power loss may.
	NoSync bool
}

func (o *WriterOptions) defaults() {
	if o.PayloadCap == 0 {
		o.PayloadCap = DefaultPayloadCap
	}
	if o.PayloadBudget == 0 {
		o.PayloadBudget = DefaultPayloadBudget
	}
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
}

// Bucket and key names (see FORMAT in doc.go).
var (
	bucketMeta     = []byte("meta")
	bucketSites    = []byte("sites")
	bucketPayloads = []byte("payloads")
	bucketRanks    = []byte("ranks")
	keyMagic       = []byte("magic")
	keyHeader      = []byte("header")
	keyHeaderCRC   = []byte("header_crc32c")
)

// Magic is the value of meta/magic in every trace.
const Magic = "p2ptrace trace\n"

type rankBuf struct {
	enc    encoder
	next   uint64 // index of the open block (enc's)
	stored int    // events of the open block already stored by a timed flush
	events int64  // events of the blocks before the open one
}

type block struct {
	rank  uint32
	index uint64
	data  []byte // value to store
	buf   []byte // backing buffer, reused once written
}

type payload struct {
	hash uint64
	data []byte
}

// Writer records a trace. Append may be called from any goroutine, but not
// concurrently with itself; the other methods are safe for concurrent use.
type Writer struct {
	path string
	opts WriterOptions
	db   *bolt.DB

	mu           sync.Mutex
	space        *sync.Cond // signalled when pending blocks are taken
	ranks        []*rankBuf
	pending      []block
	pendingBytes int
	free         [][]byte
	sites        []Site
	payloads     []payload
	payloadSeen  map[uint64]struct{}
	payloadBytes int64
	hdr          Header
	hdrDirty     bool
	err          error // sticky write error
	appendErr    error // first invalid event
	closed       bool
	dropAll      bool // closed or err set: Append drops events
	closeErr     error
	closeOnce    sync.Once

	writeMu  sync.Mutex // serializes write transactions
	kick     chan struct{}
	flushReq chan chan error
	stop     chan struct{}
	stopped  chan struct{}
}

// Create creates the trace file path and starts a recording with header h
// (Status running; FormatVersion and StartUnixNano are filled in). It refuses
// an existing file unless opts.Force, and a file another process holds.
func Create(path string, h Header, opts WriterOptions) (*Writer, error) {
	opts.defaults()
	if h.WorldSize < 0 || h.WorldSize > maxRank {
		return nil, fmt.Errorf("create trace %s: world size %d out of range (0 to %d)", path, h.WorldSize, maxRank)
	}
	if fi, err := os.Stat(path); err == nil {
		if err := regfile.Check(path, fi); err != nil {
			// Opening a FIFO to take its lock would block for ever.
			return nil, fmt.Errorf("create trace: %w", err)
		}
	}
	if _, err := os.Lstat(path); err == nil {
		if !opts.Force {
			return nil, fmt.Errorf("create trace %s: %w (use --force to replace it)", path, ErrExists)
		}
		// Take the lock of the old file before removing it, so that a
		// recording in progress is not replaced under its writer.
		if db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: opts.LockTimeout}); err == nil {
			db.Close()
		} else if errors.Is(err, berrors.ErrTimeout) {
			return nil, lockedError(path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("create trace %s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("create trace %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create trace %s: %w", path, ErrExists)
		}
		return nil, fmt.Errorf("create trace %s: %w", path, err)
	}
	f.Close()
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: opts.LockTimeout, NoSync: opts.NoSync})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, lockedError(path)
		}
		os.Remove(path)
		return nil, fmt.Errorf("create trace %s: %w", path, err)
	}
	h.FormatVersion = FormatVersion
	h.Status = StatusRunning
	if h.StartUnixNano == 0 {
		h.StartUnixNano = time.Now().UnixNano()
	}
	w := &Writer{
		path:        path,
		opts:        opts,
		db:          db,
		hdr:         h,
		payloadSeen: make(map[uint64]struct{}),
		kick:        make(chan struct{}, 1),
		flushReq:    make(chan chan error),
		stop:        make(chan struct{}),
		stopped:     make(chan struct{}),
	}
	w.space = sync.NewCond(&w.mu)
	hj, err := json.Marshal(&w.hdr)
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error {
			meta, err := tx.CreateBucket(bucketMeta)
			if err != nil {
				return err
			}
			for _, name := range [][]byte{bucketSites, bucketPayloads, bucketRanks} {
				if _, err := tx.CreateBucket(name); err != nil {
					return err
				}
			}
			if err := meta.Put(keyMagic, []byte(Magic)); err != nil {
				return err
			}
			return putHeader(meta, hj)
		})
	}
	if err != nil {
		db.Close()
		os.Remove(path)
		return nil, fmt.Errorf("create trace %s: %w", path, err)
	}
	removeStaleCopies(path)
	go w.loop()
	return w, nil
}

func lockedError(path string) error {
	return fmt.Errorf("trace %s: %w: another process holds it (a recording in progress?)", path, ErrLocked)
}

// Path is the file the Writer writes.
func (w *Writer) Path() string { return w.path }

func (w *Writer) rankBuf(r int32) *rankBuf {
	if r < 0 || r >= maxRank {
		return nil
	}
	if int(r) >= len(w.ranks) {
		n := max(int(r)+1, 2*len(w.ranks))
		if n > maxRank {
			n = maxRank
		}
		rs := make([]*rankBuf, n)
		copy(rs, w.ranks)
		w.ranks = rs
	}
	rb := w.ranks[r]
	if rb == nil {
		rb = &rankBuf{}
		rb.enc.rank, rb.enc.limit = r, w.opts.BlockSize
		rb.enc.buf = w.newBuf()
		rb.enc.reset()
		w.ranks[r] = rb
	}
	return rb
}

func (w *Writer) newBuf() []byte {
	if n := len(w.free); n > 0 {
		b := w.free[n-1]
		w.free = w.free[:n-1]
		return b
	}
	return make([]byte, blockHeaderMax, w.opts.BlockSize+1024)
}

// Fields is a set of groups of an Event's fields: those an appender may
// set in its events (AppendFields). The groups it leaves out must be zero
// in the event; the encoder then need not compare them with the previous
// event of its context once they are zero there too (comparing the cold
// fields was a third of encoding an event, and a post or done event of the
// gpu recorder sets under half of them). The fields in
// no group (Kind, Rank, Seq, Op, the event's own kind's times, a post's
// Req, Reqs) are always compared. The bytes written do not depend on the
// groups declared.
type Fields uint8

const (
	// FieldsEnvelope: Peer, Tag, Comm, Stream, Dtype, Count, Bytes, Site, Duration.
	FieldsEnvelope Fields = 1 << iota
	// FieldsBuffer: Group, Alloc, Offset, Length.
	FieldsBuffer
	// FieldsStatus: MatchRank, Source, StatusTag, StatusCnt, Flag, Index, Err.
	FieldsStatus
	// FieldsOtherKind: the fields of the other kind of event: of a post
	// event, MatchVT, DoneVT, DoneWall and MatchSeq; of a done event,
	// PostVT, PostWall and Req.
	FieldsOtherKind
	FieldsHashPost // HashPost
	FieldsHashDone // HashDone

	// AllFields is every group: what Append declares.
	AllFields = FieldsEnvelope | FieldsBuffer | FieldsStatus | FieldsOtherKind | FieldsHashPost | FieldsHashDone
)

// SetFields is the groups of fields that ev sets (has nonzero): the least
// set AppendFields takes with it.
func (ev *Event) SetFields() Fields {
	var set Fields
	add := func(nonzero bool, f Fields) {
		if nonzero {
			set |= f
		}
	}
	add(ev.Peer != 0 || ev.Tag != 0 || ev.Comm != 0 || ev.Stream != 0 || ev.Dtype != 0 || ev.Count != 0 ||
		ev.Bytes != 0 || ev.Site != 0 || ev.Duration != 0, FieldsEnvelope)
	add(ev.Group != 0 || ev.Alloc != 0 || ev.Offset != 0 || ev.Length != 0, FieldsBuffer)
	add(ev.MatchRank != 0 || ev.Source != 0 || ev.StatusTag != 0 || ev.StatusCnt != 0 || ev.Flag || ev.Index != 0 || ev.Err != 0, FieldsStatus)
	if ev.Kind == KindDone {
		add(ev.PostVT != 0 || ev.PostWall != 0 || ev.Req != 0, FieldsOtherKind)
	} else {
		add(ev.MatchVT != 0 || ev.DoneVT != 0 || ev.DoneWall != 0 || ev.MatchSeq != 0, FieldsOtherKind)
	}
	add(ev.HashPost != 0, FieldsHashPost)
	add(ev.HashDone != 0, FieldsHashDone)
	return set
}

// Append adds ev to the trace. The event is copied (Reqs too); ev may be
// reused at once. An event with an invalid Kind or a negative Rank is
// dropped and reported by Flush and Close. Append after Close does nothing.
func (w *Writer) Append(ev *Event) { w.AppendFields(ev, AllFields) }

// AppendFields is Append of an event whose fields outside the groups set
// are zero (see Fields): a recorder whose events of a kind leave the same
// fields unset declares them, and the encoder skips comparing them.
//
// It runs for every event a recorder sees: its common case (a known rank,
// a valid event, room in the block) is the inline test below and the
// encoder; the rest is appendSlowLocked's.
func (w *Writer) AppendFields(ev *Event, set Fields) {
	w.mu.Lock()
	var rb *rankBuf
	if r := int(uint32(ev.Rank)); r < len(w.ranks) && ev.Kind-KindPost <= KindDone-KindPost && !w.dropAll {
		rb = w.ranks[r]
	}
	if rb == nil {
		if rb = w.appendSlowLocked(ev); rb == nil {
			w.mu.Unlock()
			return
		}
	}
	if rb.enc.encode(ev, set) {
		w.blockFullLocked(rb)
	}
	w.mu.Unlock()
}

// appendSlowLocked is Append's uncommon case: it returns the rank's buffer
// (creating it) for a valid event, or nil for an event to drop (recording
// the first invalid one).
func (w *Writer) appendSlowLocked(ev *Event) *rankBuf {
	if w.dropAll {
		return nil
	}
	if (ev.Kind != KindPost && ev.Kind != KindDone) || ev.Rank < 0 || ev.Rank >= maxRank {
		if w.appendErr == nil {
			w.appendErr = fmt.Errorf("trace %s: invalid event dropped (rank %d seq %d kind %d)", w.path, ev.Rank, ev.Seq, ev.Kind)
		}
		return nil
	}
	return w.rankBuf(ev.Rank)
}

// blockFullLocked hands the rank's full block to the background writer,
// and waits while too much is pending.
func (w *Writer) blockFullLocked(rb *rankBuf) {
	w.cutLocked(rb)
	select {
	case w.kick <- struct{}{}:
	default:
	}
	for w.pendingBytes > maxPendingBytes && w.err == nil && !w.closed {
		w.space.Wait()
	}
}

// cutLocked moves the rank's open block, full, to pending: it is stored
// under its index for good (replacing what a timed flush stored there), and
// the rank's next events start the next block.
func (w *Writer) cutLocked(rb *rankBuf) {
	if rb.enc.n == 0 {
		return
	}
	buf := rb.enc.buf
	v := rb.enc.finish()
	w.pending = append(w.pending, block{rank: uint32(rb.enc.rank), index: rb.next, data: v, buf: buf})
	w.pendingBytes += len(v)
	rb.events += int64(rb.enc.n)
	rb.next++
	rb.stored = 0
	rb.enc.buf = w.newBuf()
	rb.enc.reset()
}

// snapshotLocked moves a copy of the rank's open block to pending, if it
// has events not stored yet: a timed flush stores the block as it is so far
// under its index, and the encoder goes on filling the same block. The next
// flush rewrites that key with the longer block, until the block is full
// (cutLocked). A timed flush thus never cuts a block short: blocks stay
// BlockSize long (few keys, the codec rarely restarts) however often the
// writer flushes, and a killed recorder still leaves every event of the
// last flush in the file.
func (w *Writer) snapshotLocked(rb *rankBuf) {
	if rb.enc.n == rb.stored {
		return
	}
	v := rb.enc.finish()
	buf := append(w.newBuf()[:0], v...)
	w.pending = append(w.pending, block{rank: uint32(rb.enc.rank), index: rb.next, data: buf, buf: buf})
	w.pendingBytes += len(buf)
	rb.stored = rb.enc.n
}

// AddSite adds an entry of the call-site table (written with the next flush).
func (w *Writer) AddSite(s Site) {
	w.mu.Lock()
	if !w.closed {
		w.sites = append(w.sites, s)
	}
	w.mu.Unlock()
}

// AddPayload stores data as the payload of hash, unless it is larger than
// PayloadCap, the budget is spent, or hash is already stored. data is copied.
func (w *Writer) AddPayload(hash uint64, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.opts.PayloadCap < 0 || len(data) > w.opts.PayloadCap {
		return
	}
	if _, ok := w.payloadSeen[hash]; ok {
		return
	}
	if w.payloadBytes+int64(len(data)) > w.opts.PayloadBudget {
		return
	}
	w.payloadSeen[hash] = struct{}{}
	w.payloadBytes += int64(len(data))
	w.payloads = append(w.payloads, payload{hash, append([]byte(nil), data...)})
}

// SetHeader updates the header (written with the next flush). FormatVersion
// is kept.
func (w *Writer) SetHeader(f func(*Header)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.hdr.WorldSize
	f(&w.hdr)
	w.hdr.FormatVersion = FormatVersion
	if w.hdr.WorldSize < 0 || w.hdr.WorldSize > maxRank {
		if w.appendErr == nil {
			w.appendErr = fmt.Errorf("trace %s: world size %d out of range (0 to %d), kept %d", w.path, w.hdr.WorldSize, maxRank, old)
		}
		w.hdr.WorldSize = old
	}
	w.hdrDirty = true
}

// Header returns a copy of the current header.
func (w *Writer) Header() Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.hdr
	h.Command = append([]string(nil), h.Command...)
	h.RankEvents = append([]int64(nil), h.RankEvents...)
	return h
}

func (w *Writer) loop() {
	defer close(w.stopped)
	t := time.NewTicker(w.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.kick:
			w.write(false)
		case <-t.C:
			w.write(true)
		case reply := <-w.flushReq:
			reply <- w.write(true)
		case <-w.stop:
			return
		}
	}
}

// write stores the pending blocks (and, with partial, every rank's open
// block as it is so far), sites, payloads and a changed header in one
// transaction.
func (w *Writer) write(partial bool) error {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	if partial {
		for _, rb := range w.ranks {
			if rb != nil {
				w.snapshotLocked(rb)
			}
		}
	}
	blocks, sites, payloads := w.pending, w.sites, w.payloads
	w.pending, w.sites, w.payloads = nil, nil, nil
	w.pendingBytes = 0
	var hj []byte
	if w.hdrDirty {
		hj, _ = json.Marshal(&w.hdr)
		w.hdrDirty = false
	}
	w.space.Broadcast()
	w.mu.Unlock()
	if len(blocks) == 0 && len(sites) == 0 && len(payloads) == 0 && hj == nil {
		return nil
	}
	err := w.db.Update(func(tx *bolt.Tx) error {
		return storeAll(tx, blocks, sites, payloads, hj)
	})
	w.mu.Lock()
	for _, b := range blocks {
		w.free = append(w.free, b.buf[:blockHeaderMax])
	}
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("write trace %s: %w", w.path, err)
		w.dropAll = true
		w.space.Broadcast()
	}
	err = w.err
	w.mu.Unlock()
	return err
}

func storeAll(tx *bolt.Tx, blocks []block, sites []Site, payloads []payload, hj []byte) error {
	ranks := tx.Bucket(bucketRanks)
	if ranks == nil {
		return errors.New("bucket ranks missing")
	}
	ranks.FillPercent = 1.0
	var cur *bolt.Bucket
	curRank := uint32(math.MaxUint32)
	var key [8]byte
	for _, b := range blocks {
		if cur == nil || b.rank != curRank {
			var rk [4]byte
			binary.BigEndian.PutUint32(rk[:], b.rank)
			var err error
			cur, err = ranks.CreateBucketIfNotExists(rk[:])
			if err != nil {
				return err
			}
			cur.FillPercent = 1.0
			curRank = b.rank
		}
		binary.BigEndian.PutUint64(key[:], b.index)
		if err := cur.Put(key[:], b.data); err != nil {
			return err
		}
	}
	if len(sites) > 0 {
		sb := tx.Bucket(bucketSites)
		if sb == nil {
			return errors.New("bucket sites missing")
		}
		sb.FillPercent = 1.0
		for _, s := range sites {
			var k [4]byte
			binary.BigEndian.PutUint32(k[:], s.ID)
			if err := sb.Put(k[:], encodeSite(s)); err != nil {
				return err
			}
		}
	}
	if len(payloads) > 0 {
		pb := tx.Bucket(bucketPayloads)
		if pb == nil {
			return errors.New("bucket payloads missing")
		}
		pb.FillPercent = 1.0
		for _, p := range payloads {
			var k [8]byte
			binary.BigEndian.PutUint64(k[:], p.hash)
			v := make([]byte, 4+len(p.data))
			binary.LittleEndian.PutUint32(v, crc32.Checksum(p.data, castagnoli))
			copy(v[4:], p.data)
			if err := pb.Put(k[:], v); err != nil {
				return err
			}
		}
	}
	if hj != nil {
		mb := tx.Bucket(bucketMeta)
		if mb == nil {
			return errors.New("bucket meta missing")
		}
		mb.FillPercent = 1.0
		if err := putHeader(mb, hj); err != nil {
			return err
		}
	}
	return nil
}

// encodeSite: uvarint line, uvarint len + function, uvarint len + file, CRC32C (LE) of the rest.
func encodeSite(s Site) []byte {
	b := binary.AppendUvarint(nil, uint64(s.Line))
	b = binary.AppendUvarint(b, uint64(len(s.Function)))
	b = append(b, s.Function...)
	b = binary.AppendUvarint(b, uint64(len(s.File)))
	b = append(b, s.File...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func decodeSite(id uint32, v []byte) (Site, error) {
	if len(v) < 4 {
		return Site{}, errors.New("short site record")
	}
	body := v[:len(v)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(v[len(v)-4:]) {
		return Site{}, errors.New("site record checksum mismatch")
	}
	line, k := binary.Uvarint(body)
	if k <= 0 || line > math.MaxInt32 {
		return Site{}, errors.New("bad site line")
	}
	body = body[k:]
	str := func() (string, error) {
		n, k := binary.Uvarint(body)
		if k <= 0 || n > uint64(len(body)-k) {
			return "", errors.New("bad site string")
		}
		s := string(body[k : k+int(n)])
		body = body[k+int(n):]
		return s, nil
	}
	fn, err := str()
	if err != nil {
		return Site{}, err
	}
	file, err := str()
	if err != nil {
		return Site{}, err
	}
	if len(body) != 0 {
		return Site{}, errors.New("trailing bytes in site record")
	}
	return Site{ID: id, Function: fn, File: file, Line: int(line)}, nil
}

// Flush writes everything appended so far (partial blocks included) and
// returns the first write error of the Writer, if any.
func (w *Writer) Flush() error {
	w.mu.Lock()
	closed, aerr := w.closed, w.appendErr
	w.mu.Unlock()
	if closed {
		return fmt.Errorf("flush trace %s: %w", w.path, ErrClosed)
	}
	reply := make(chan error, 1)
	select {
	case w.flushReq <- reply:
		if err := <-reply; err != nil {
			return err
		}
	case <-w.stopped:
		return fmt.Errorf("flush trace %s: %w", w.path, ErrClosed)
	}
	return aerr
}

// Close flushes everything, writes the final header (status, message, end
// time, event counts) and closes the file. Close is idempotent: later calls
// return the result of the first.
func (w *Writer) Close(status Status, message string) error {
	w.closeOnce.Do(func() { w.closeErr = w.close(status, message) })
	return w.closeErr
}

func (w *Writer) close(status Status, message string) error {
	w.mu.Lock()
	w.closed, w.dropAll = true, true // from now on Append drops events
	w.space.Broadcast()
	w.mu.Unlock()
	close(w.stop)
	<-w.stopped
	werr := w.write(true)
	w.mu.Lock()
	w.hdr.Status = status
	w.hdr.Message = message
	w.hdr.FormatVersion = FormatVersion
	// Findings, if any, were set with SetHeader; either way they are
	// structured records now (an older trace has no version).
	w.hdr.FindingsVersion = verdict.Version
	if w.hdr.EndUnixNano == 0 {
		w.hdr.EndUnixNano = time.Now().UnixNano()
	}
	n := max(len(w.ranks), w.hdr.WorldSize)
	w.hdr.RankEvents = make([]int64, n)
	w.hdr.Events = 0
	for i, rb := range w.ranks {
		if rb != nil {
			n := rb.events + int64(rb.enc.n)
			w.hdr.RankEvents[i] = n
			w.hdr.Events += n
		}
	}
	hj, _ := json.Marshal(&w.hdr)
	aerr := w.appendErr
	w.mu.Unlock()
	var herr error
	if werr == nil {
		herr = w.db.Update(func(tx *bolt.Tx) error { return storeAll(tx, nil, nil, nil, hj) })
		if herr != nil {
			herr = fmt.Errorf("write trace header %s: %w", w.path, herr)
		}
	}
	// The file now holds the complete trace; make it hold only that.
	var ferr error
	var compacted *bolt.DB
	if werr == nil && herr == nil {
		compacted, ferr = finishFile(w.db, w.path, w.opts.NoSync)
	}
	cerr := w.db.Close()
	if compacted != nil {
		cerr = errors.Join(cerr, compacted.Close())
	}
	if cerr != nil {
		cerr = fmt.Errorf("close trace %s: %w", w.path, cerr)
	}
	return errors.Join(werr, herr, ferr, cerr, aerr)
}

// putHeader stores the header JSON and its checksum.
func putHeader(meta *bolt.Bucket, hj []byte) error {
	if err := meta.Put(keyHeader, hj); err != nil {
		return err
	}
	return meta.Put(keyHeaderCRC, binary.LittleEndian.AppendUint32(nil, crc32.Checksum(hj, castagnoli)))
}
