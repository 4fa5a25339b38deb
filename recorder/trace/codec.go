package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
)

// Field numbers of the presence bitmask. The numbering is part of the file
// format (see FORMAT in doc.go): the fields most likely to change from one
// event to the next come first, so that the mask of a typical event fits in
// one varint byte.
const (
	fPostWall = iota
	fDoneWall
	fPostVT
	fDoneVT
	fMatchVT
	fSeq
	fReq
	fMatchSeq
	fReqs
	fPeer
	fTag
	fBytes
	fCount
	fDtype
	fSite
	fMatchRank
	fSource
	fStatusTag
	fStatusCnt
	fComm
	fStream
	fGroup
	fAlloc
	fOffset
	fLength
	fDuration
	fFlag
	fIndex
	fErr
	fHashPost
	fHashDone
	nFields
)

const (
	blockPrefix    = 4                           // CRC32C, little endian
	blockHeaderMax = 4 + 2*binary.MaxVarintLen32 // CRC + rank + event count
	nContexts      = 128                         // (op & 63) | done<<6
	maxReqs        = 1 << 20                     // sanity bound on len(Reqs) when decoding
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// context is the decoder's transformed field values of the previous event
// of one (kind, op) pair in the current block: the prediction for the next
// one. (The encoder keeps its own, encContext.)
type context struct {
	gen  uint32
	vals [nFields]uint64
	reqs []byte // encoded Reqs
	// tmpl is an event whose Kind, Rank and cold fields (fPeer to fErr)
	// are decoded from vals, valid while tmplOK. Most events repeat their
	// context's cold fields (their mask has none of coldBits): the decoder
	// writes the others into tmpl, which then is the event decoded (see
	// decode), instead of decoding them again.
	tmpl   Event
	tmplOK bool
	// The encoded mask of the context's last event decoded from eight
	// bytes at once: its bytes (maskRaw, as a little-endian word, the bytes
	// past it cleared by maskKeep), their length and the mask. Events of a
	// context mostly repeat their mask (in a ring, five bytes long: a hash
	// sets bit 29 or 30), and a match of the bytes is the same varint.
	// Kept across blocks: the mapping from bytes to mask never changes.
	// A new context's maskKeep 0 and maskRaw 1 match nothing.
	maskRaw, maskKeep, mask uint64
	maskLen                 int
}

// coldBits are the mask bits of the fields fPeer to fErr: each a function
// of one raw field of the event alone (not the hashes, which are stored raw).
const coldBits = (1<<fHashPost - 1) &^ (1<<(fReqs+1) - 1)

// timeState is the per-rank running state the transforms are relative to.
type timeState struct {
	next     uint64 // expected Seq of the next post event
	lastReq  uint64 // last nonzero Req of a post event
	lastVT   int64
	lastWall int64
}

func zz(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzz(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

func ctxIndex(op Op, done bool) int {
	i := int(op) & 63
	if done {
		i |= 64
	}
	return i
}

// maxEventFixed bounds the encoding of one event but its Reqs: the tag, the
// mask and every field as a 10-byte varint (hashes take 8).
const maxEventFixed = (2 + nFields) * binary.MaxVarintLen64

// encoder packs the events of one rank into a block.
//
// It writes what FORMAT says (a field is present when its transformed value
// differs from the context's previous one) without transforming every
// field of every event: transforms are one-to-one, so two values compare as
// their transforms do. A field whose transform is a function of that field
// alone (the cold fields, the hashes, and per kind the other kind's times,
// MatchSeq of a post, Req of a done) is compared raw; a field relative to
// the running state or to another field (Seq, the kind's own times, Req of
// a post, MatchVT and MatchSeq of a done) as its difference, before the
// zigzag. Only the fields written are transformed the rest of the way.
type encoder struct {
	rank  int32
	limit int    // encoded size of a full block (WriterOptions.BlockSize)
	buf   []byte // blockHeaderMax reserved bytes, then the events
	n     int
	st    timeState
	ctx   [nContexts]*encContext
	reqs  []byte          // scratch: the encoding of an event's Reqs
	vals  [nFields]uint64 // scratch: transformed cold fields
}

// encContext is the encoder's prediction for the next event of one
// (kind, op) context: the decoder's context, kept in the form the encoder
// compares (see encoder). Its zero value, but for cold.matchRank (the
// block's rank) and reqs (the single byte 0), is the start of a block.
type encContext struct {
	// hot holds fields 0 to fMatchSeq as compared: differences for the
	// relative fields, raw values for the others. Written, they are
	// zigzagged but for postPlain and donePlain.
	hot  [fReqs]uint64
	cold coldFields // raw cold fields and hashes
	reqs []byte     // encoded Reqs; the single byte 0 for none
	// zero is the groups of fields (Fields) known to be zero here: those
	// the previous event declared unset. An event that does not set them
	// either needs no comparison of them.
	zero Fields
}

// hotBits are the mask bits of the hot fields. Of them, an encContext holds
// postPlain (of a post context) and donePlain (of a done context) as their
// transforms are; all others are zigzagged when written.
const (
	hotBits    = 1<<fReqs - 1
	postPlain  = 1<<fReq | 1<<fMatchSeq
	donePlain  = 1 << fReq
	tagMaskMax = 0x80 // tag and mask below it take one byte each
)

// coldFields is the raw cold fields (fPeer to fErr) and hashes of an event,
// pairs of adjacent int32 fields of Event as one word (pair), so that
// encode loads them at once.
type coldFields struct {
	peerTag, commStream, sourceStatusTag              uint64
	count, bytes, offset, length, duration, statusCnt int64
	hashPost, hashDone                                uint64
	group, matchRank, index                           int32
	alloc, site                                       uint32
	dtype                                             Dtype
	err                                               ErrCode
	flag                                              bool
}

func pair(lo, hi int32) uint64 { return uint64(uint32(lo)) | uint64(uint32(hi))<<32 }

// coldMask returns the mask bits of the cold fields and hashes of ev that
// differ from p, and makes p ev's.
func coldMask(p *coldFields, ev *Event) uint64 {
	var m uint64
	set := func(differ bool, f int) {
		if differ {
			m |= 1 << f
		}
	}
	set(ev.Peer != int32(p.peerTag), fPeer)
	set(ev.Tag != int32(p.peerTag>>32), fTag)
	set(ev.Comm != int32(p.commStream), fComm)
	set(ev.Stream != int32(p.commStream>>32), fStream)
	set(ev.Source != int32(p.sourceStatusTag), fSource)
	set(ev.StatusTag != int32(p.sourceStatusTag>>32), fStatusTag)
	set(ev.Count != p.count, fCount)
	set(ev.Bytes != p.bytes, fBytes)
	set(ev.Offset != p.offset, fOffset)
	set(ev.Length != p.length, fLength)
	set(ev.Duration != p.duration, fDuration)
	set(ev.StatusCnt != p.statusCnt, fStatusCnt)
	set(ev.HashPost != p.hashPost, fHashPost)
	set(ev.HashDone != p.hashDone, fHashDone)
	set(ev.Group != p.group, fGroup)
	set(ev.MatchRank != p.matchRank, fMatchRank)
	set(ev.Index != p.index, fIndex)
	set(ev.Alloc != p.alloc, fAlloc)
	set(ev.Site != p.site, fSite)
	set(ev.Dtype != p.dtype, fDtype)
	set(ev.Err != p.err, fErr)
	set(ev.Flag != p.flag, fFlag)
	*p = coldFields{
		peerTag: pair(ev.Peer, ev.Tag), commStream: pair(ev.Comm, ev.Stream),
		sourceStatusTag: pair(ev.Source, ev.StatusTag),
		count:           ev.Count, bytes: ev.Bytes, offset: ev.Offset, length: ev.Length,
		duration: ev.Duration, statusCnt: ev.StatusCnt, hashPost: ev.HashPost, hashDone: ev.HashDone,
		group: ev.Group, matchRank: ev.MatchRank, index: ev.Index, alloc: ev.Alloc, site: ev.Site,
		dtype: ev.Dtype, err: ev.Err, flag: ev.Flag,
	}
	return m
}

func (e *encoder) reset() {
	if cap(e.buf) < blockHeaderMax {
		e.buf = make([]byte, blockHeaderMax, 16<<10)
	}
	e.buf = e.buf[:blockHeaderMax]
	e.n = 0
	e.st = timeState{}
	// Restart every context (the few ops a rank uses have one each): a
	// block holds thousands of events, so this costs less than checking
	// at each event whether its context is the block's.
	for _, c := range e.ctx {
		if c != nil {
			c.restart(e.rank)
		}
	}
}

// restart makes c the context at the start of a block of rank.
func (c *encContext) restart(rank int32) {
	*c = encContext{cold: coldFields{matchRank: rank}, reqs: append(c.reqs[:0], 0)}
}

// context returns context i.
func (e *encoder) context(i int) *encContext {
	c := e.ctx[i]
	if c == nil {
		c = e.newContext(i)
	}
	return c
}

// newContext is context i at the start of a block.
func (e *encoder) newContext(i int) *encContext {
	c := &encContext{}
	c.restart(e.rank)
	e.ctx[i] = c
	return c
}

// putUvarint writes v at b[n:] and returns the index after it.
func putUvarint(b []byte, n int, v uint64) int {
	for v >= 0x80 {
		b[n] = byte(v) | 0x80
		v >>= 7
		n++
	}
	b[n] = byte(v)
	return n + 1
}

// encode appends ev (whose Kind must be KindPost or KindDone) to the block
// and reports whether the block is now full (limit bytes or maxBlockEvents).
// The groups of fields outside set must be zero in ev (see Fields): those
// that are zero in the context too are not compared.
func (e *encoder) encode(ev *Event, set Fields) (full bool) {
	st := &e.st
	lastReq := st.lastReq // Reqs are relative to the state before the event
	var c *encContext
	var mask, tag, plain uint64
	var need Fields // the groups to compare: set, and those not known zero
	// The hot fields, each compared with the context's and kept if it
	// differs; the state advances with them.
	if ev.Kind == KindDone {
		c = e.context(int(ev.Op)&63 | 64)
		need, c.zero = set|^c.zero, ^set
		tag, plain = uint64(ev.Op)<<1|1, donePlain
		h := &c.hot
		if v := st.next - 1 - ev.Seq; v != h[fSeq] {
			h[fSeq], mask = v, mask|1<<fSeq
		}
		if v := uint64(ev.DoneVT - st.lastVT); v != h[fDoneVT] {
			h[fDoneVT], mask = v, mask|1<<fDoneVT
		}
		if v := uint64(ev.DoneWall - st.lastWall); v != h[fDoneWall] {
			h[fDoneWall], mask = v, mask|1<<fDoneWall
		}
		if v := uint64(ev.DoneVT - ev.MatchVT); v != h[fMatchVT] {
			h[fMatchVT], mask = v, mask|1<<fMatchVT
		}
		if v := ev.MatchSeq - ev.Seq; v != h[fMatchSeq] {
			h[fMatchSeq], mask = v, mask|1<<fMatchSeq
		}
		if need&FieldsOtherKind != 0 {
			if v := uint64(ev.PostVT); v != h[fPostVT] {
				h[fPostVT], mask = v, mask|1<<fPostVT
			}
			if v := uint64(ev.PostWall); v != h[fPostWall] {
				h[fPostWall], mask = v, mask|1<<fPostWall
			}
			if v := ev.Req; v != h[fReq] {
				h[fReq], mask = v, mask|1<<fReq
			}
		}
		st.lastVT, st.lastWall = ev.DoneVT, ev.DoneWall
	} else {
		c = e.context(int(ev.Op) & 63)
		need, c.zero = set|^c.zero, ^set
		tag, plain = uint64(ev.Op)<<1, postPlain
		h := &c.hot
		if v := ev.Seq - st.next; v != h[fSeq] {
			h[fSeq], mask = v, mask|1<<fSeq
		}
		if v := uint64(ev.PostVT - st.lastVT); v != h[fPostVT] {
			h[fPostVT], mask = v, mask|1<<fPostVT
		}
		if v := uint64(ev.PostWall - st.lastWall); v != h[fPostWall] {
			h[fPostWall], mask = v, mask|1<<fPostWall
		}
		if v := reqTransform(ev.Req, lastReq); v != h[fReq] {
			h[fReq], mask = v, mask|1<<fReq
		}
		if need&FieldsOtherKind != 0 {
			if v := uint64(ev.DoneVT); v != h[fDoneVT] {
				h[fDoneVT], mask = v, mask|1<<fDoneVT
			}
			if v := uint64(ev.DoneWall); v != h[fDoneWall] {
				h[fDoneWall], mask = v, mask|1<<fDoneWall
			}
			if v := uint64(ev.MatchVT); v != h[fMatchVT] {
				h[fMatchVT], mask = v, mask|1<<fMatchVT
			}
			if v := ev.MatchSeq; v != h[fMatchSeq] {
				h[fMatchSeq], mask = v, mask|1<<fMatchSeq
			}
		}
		st.next = ev.Seq + 1
		st.lastVT, st.lastWall = ev.PostVT, ev.PostWall
		if ev.Req != 0 {
			st.lastReq = ev.Req
		}
	}
	// Reqs, the cold fields and hashes: the exception (most events repeat
	// their context's call but for its times), so first all at once, by
	// group, then field by field (restMask). Pairs of adjacent int32 fields
	// load as one word.
	p := &c.cold
	var cold uint64
	if need&FieldsEnvelope != 0 {
		cold = (pair(ev.Peer, ev.Tag) ^ p.peerTag) | (pair(ev.Comm, ev.Stream) ^ p.commStream) |
			uint64(ev.Count^p.count) | uint64(ev.Bytes^p.bytes) | uint64(ev.Duration^p.duration) |
			uint64(ev.Site^p.site) | uint64(ev.Dtype^p.dtype)
	}
	if need&FieldsStatus != 0 {
		cold |= (pair(ev.Source, ev.StatusTag) ^ p.sourceStatusTag) | uint64(ev.StatusCnt^p.statusCnt) |
			uint64(uint32(ev.MatchRank^p.matchRank)|uint32(ev.Index^p.index)) | uint64(ev.Err^p.err)
		if ev.Flag != p.flag {
			cold = 1
		}
	}
	if need&FieldsBuffer != 0 {
		cold |= uint64(ev.Offset^p.offset) | uint64(ev.Length^p.length) |
			uint64(uint32(ev.Group^p.group)|(ev.Alloc^p.alloc))
	}
	if need&FieldsHashPost != 0 {
		cold |= ev.HashPost ^ p.hashPost
	}
	if need&FieldsHashDone != 0 {
		cold |= ev.HashDone ^ p.hashDone
	}
	if cold|uint64(len(ev.Reqs))|uint64(len(c.reqs)-1) != 0 {
		mask |= e.restMask(c, ev, lastReq, cold != 0)
	}

	// Write the event with one capacity check: maxEventFixed and the Reqs.
	n := len(e.buf)
	if cap(e.buf)-n < maxEventFixed+len(c.reqs) {
		e.buf = slices.Grow(e.buf, maxEventFixed+len(c.reqs))
	}
	b := e.buf[:cap(e.buf)]
	if tag|mask < tagMaskMax {
		b[n], b[n+1] = byte(tag), byte(mask)
		n += 2
	} else {
		n = putUvarint(b, n, tag)
		n = putUvarint(b, n, mask)
	}
	for m := mask & hotBits; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		v := c.hot[i]
		if plain>>i&1 == 0 {
			v = zz(int64(v))
		}
		n = putUvarint(b, n, v)
	}
	if mask&^hotBits != 0 {
		n = e.putRest(b, n, mask, c, ev)
	}
	e.buf = e.buf[:n]
	e.n++
	return n >= e.limit || e.n >= maxBlockEvents
}

// restMask returns the mask bits of Reqs (encoded relative to lastReq)
// and, if cold, of the cold fields and hashes of ev that differ from c's,
// and makes c's those of ev.
func (e *encoder) restMask(c *encContext, ev *Event, lastReq uint64, cold bool) uint64 {
	var m uint64
	if len(ev.Reqs) != 0 || len(c.reqs) != 1 {
		e.reqs = appendReqs(e.reqs[:0], ev.Reqs, lastReq)
		if string(e.reqs) != string(c.reqs) {
			c.reqs = append(c.reqs[:0], e.reqs...)
			m |= 1 << fReqs
		}
	}
	if cold {
		m |= coldMask(&c.cold, ev)
	}
	return m
}

// putRest writes the fields of mask from fReqs on: Reqs, the cold fields,
// the hashes.
func (e *encoder) putRest(b []byte, n int, mask uint64, c *encContext, ev *Event) int {
	if mask&(1<<fReqs) != 0 {
		n += copy(b[n:], c.reqs)
	}
	if m := mask & coldBits; m != 0 {
		transformCold(&e.vals, ev, e.rank)
		for ; m != 0; m &= m - 1 {
			n = putUvarint(b, n, e.vals[bits.TrailingZeros64(m)])
		}
	}
	if mask&(1<<fHashPost) != 0 {
		binary.LittleEndian.PutUint64(b[n:], ev.HashPost)
		n += 8
	}
	if mask&(1<<fHashDone) != 0 {
		binary.LittleEndian.PutUint64(b[n:], ev.HashDone)
		n += 8
	}
	return n
}

// reqTransform maps Req (0 = none) bijectively onto a uint64 that is small
// when Req is a small step from the previous request id.
func reqTransform(req, last uint64) uint64 {
	if req == 0 {
		return 0
	}
	u := zz(int64(req - last))
	u0 := zz(int64(-last)) // the delta that would mean req == 0
	if u < u0 {
		return u + 1
	}
	return u
}

func reqInverse(t, last uint64) uint64 {
	if t == 0 {
		return 0
	}
	u0 := zz(int64(-last))
	u := t
	if t-1 < u0 {
		u = t - 1
	}
	return last + uint64(unzz(u))
}

func appendReqs(dst []byte, reqs []uint64, last uint64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(reqs)))
	prev := last
	for _, r := range reqs {
		dst = binary.AppendUvarint(dst, zz(int64(r-prev)))
		prev = r
	}
	return dst
}

// transformCold computes the transformed values of the fields fPeer to fErr.
func transformCold(vals *[nFields]uint64, ev *Event, rank int32) {
	vals[fPeer] = zz(int64(ev.Peer))
	vals[fTag] = zz(int64(ev.Tag))
	vals[fBytes] = zz(ev.Bytes)
	vals[fCount] = zz(ev.Count)
	vals[fDtype] = uint64(ev.Dtype)
	vals[fSite] = uint64(ev.Site)
	vals[fMatchRank] = zz(int64(ev.MatchRank) - int64(rank))
	vals[fSource] = zz(int64(ev.Source))
	vals[fStatusTag] = zz(int64(ev.StatusTag))
	vals[fStatusCnt] = zz(ev.StatusCnt)
	vals[fComm] = zz(int64(ev.Comm))
	vals[fStream] = zz(int64(ev.Stream))
	vals[fGroup] = zz(int64(ev.Group))
	vals[fAlloc] = uint64(ev.Alloc)
	vals[fOffset] = zz(ev.Offset)
	vals[fLength] = zz(ev.Length)
	vals[fDuration] = zz(ev.Duration)
	vals[fFlag] = 0
	if ev.Flag {
		vals[fFlag] = 1
	}
	vals[fIndex] = zz(int64(ev.Index))
	vals[fErr] = uint64(ev.Err)
}

// finish writes the block header and checksum in front of the events and
// returns the block value. The encoder must be reset before it is used again.
func (e *encoder) finish() []byte {
	var hdr [2 * binary.MaxVarintLen32]byte
	h := binary.AppendUvarint(hdr[:0], uint64(uint32(e.rank)))
	h = binary.AppendUvarint(h, uint64(e.n))
	start := blockHeaderMax - len(h) - blockPrefix
	copy(e.buf[start+blockPrefix:], h)
	v := e.buf[start:]
	binary.LittleEndian.PutUint32(v, crc32.Checksum(v[blockPrefix:], castagnoli))
	return v
}

var errShortBlock = errors.New("block shorter than its header")

// decoder reads the events of one block.
type decoder struct {
	data []byte // the block's events (or the first ones: see Cursor's window)
	pos  int    // where in data the next event starts
	rank int32
	left int // events not yet decoded
	gen  uint32
	st   timeState
	ctx  [nContexts]*context
	reqs []uint64 // the Reqs of the event Cursor.NextRef returned last
	skip skipState
}

// skipState is Cursor.NextPost's: while left > 0, decode skips Done
// events, decoded briefly, counts them (n) and goes on to the next event,
// which saves a return to the cursor and its reader per Done left out.
type skipState struct {
	left, n int
	lastSeq uint64 // of the last Done skipped
	lastOp  Op
}

// blockInfo parses and checks the checksum and header of a block value.
func blockInfo(v []byte) (rank uint32, n int, body []byte, err error) {
	if len(v) < blockPrefix+2 {
		return 0, 0, nil, errShortBlock
	}
	want := binary.LittleEndian.Uint32(v)
	if got := crc32.Checksum(v[blockPrefix:], castagnoli); got != want {
		return 0, 0, nil, fmt.Errorf("checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	p := v[blockPrefix:]
	r, k := binary.Uvarint(p)
	if k <= 0 || r > math.MaxInt32 {
		return 0, 0, nil, errors.New("bad rank in block header")
	}
	p = p[k:]
	cnt, k := binary.Uvarint(p)
	if k <= 0 || cnt > uint64(len(p)) {
		return 0, 0, nil, errors.New("bad event count in block header")
	}
	return uint32(r), int(cnt), p[k:], nil
}

// reset starts decoding a block value (checksum included). The decoder keeps
// v, which must stay unchanged until the block is decoded.
func (d *decoder) reset(v []byte) error {
	rank, n, body, err := blockInfo(v)
	if err != nil {
		return err
	}
	d.begin(rank, n, body)
	return nil
}

// begin starts decoding the n events of a block of rank checked by
// blockInfo, whose events start with data (all of them, or the first ones:
// see Cursor's window).
func (d *decoder) begin(rank uint32, n int, data []byte) {
	d.rank = int32(rank)
	d.left = n
	d.data, d.pos = data, 0
	d.gen++
	d.st = timeState{}
}

func (d *decoder) context(i int) *context {
	c := d.ctx[i]
	if c == nil {
		c = &context{maskRaw: 1}
		d.ctx[i] = c
	}
	if c.gen != d.gen {
		c.gen = d.gen
		c.vals = [nFields]uint64{}
		c.reqs = append(c.reqs[:0], 0)
		c.tmplOK = false
	}
	return c
}

var errTrailing = errors.New("bytes after the last event of the block")

var errVarint = errors.New("truncated or overlong varint")

// errTruncatedHash, like errVarint, is no new error per event cut short: a
// Cursor decodes the event cut by its window's end again (see Cursor).
var errTruncatedHash = errors.New("truncated hash")

// next decodes the next event into ev, reusing the capacity of ev.Reqs.
// It returns false with a nil error at the end of the block.
func (d *decoder) next(ev *Event) (bool, error) {
	t, err := d.decode(ev.Reqs[:0])
	if t == nil {
		return false, err
	}
	*ev = *t
	return true, nil
}

// decode decodes the next event into its context's tmpl, its Reqs appended
// to reqs, and returns the tmpl: the context's cold fields are decoded only
// when they change (see context), and the event is not copied. While
// d.skip.left > 0, it skips Done events, decoding of each only what the
// decoder's state and skipState need (see Cursor.NextPost). It
// returns nil with a nil error at the end of the block.
//
// A failed decode leaves d.pos, d.left and the time state as they were
// (a Cursor decodes an event cut by its window's end again); what else it
// wrote, decoding the same event again writes the same way.
func (d *decoder) decode(reqs []uint64) (*Event, error) {
	b := d.data
again:
	if d.left == 0 {
		if d.pos != len(b) {
			return nil, errTrailing
		}
		return nil, nil
	}
	// i is where the next field starts in b: a local, stored back once the
	// event is decoded.
	var tag, mask uint64
	i := d.pos
	if i < len(b) && b[i] < 0x80 {
		tag, i = uint64(b[i]), i+1
	} else {
		if tag, i = varint(b, i); i < 0 {
			return nil, errVarint
		}
		if tag>>1 > math.MaxUint8 {
			return nil, fmt.Errorf("bad op %d", tag>>1)
		}
	}
	op, done := Op(tag>>1), tag&1 == 1
	c := d.context(ctxIndex(op, done))
	if uint(i) < uint(len(b)) && len(b)-i >= 8 { // a hash sets bits past 7: five bytes
		x := binary.LittleEndian.Uint64(b[i:])
		if x&c.maskKeep == c.maskRaw { // the context's last mask again
			mask, i = c.mask, i+c.maskLen
		} else {
			n := 0
			if mask, n = varint8(x); n == 0 {
				if mask, i = varint(b, i); i < 0 {
					return nil, errVarint
				}
			} else if mask>>nFields == 0 {
				c.maskKeep = 1<<(8*n) - 1
				c.maskRaw, c.mask, c.maskLen = x&c.maskKeep, mask, n
				i += n
			} else {
				i += n
			}
		}
	} else if mask, i = varint(b, i); i < 0 {
		return nil, errVarint
	}
	if mask>>nFields != 0 {
		return nil, fmt.Errorf("unknown fields in mask %#x", mask)
	}
	vals := &c.vals
	// The fields in the order of their numbers: the varints and Reqs, then
	// the hashes. A varint of up to eight bytes is read at once, inline (a
	// call spills this function's registers: at every field, that doubled
	// its cost).
	for m := mask &^ (1<<fHashPost | 1<<fHashDone); m != 0; m &= m - 1 {
		f := bits.TrailingZeros64(m)
		if f == fReqs {
			var err error
			if i, err = d.reqsField(c, i); err != nil {
				return nil, err
			}
			continue
		}
		var v uint64
		if n := 0; uint(i) < uint(len(b)) && len(b)-i >= 8 {
			x := binary.LittleEndian.Uint64(b[i:])
			if x&0x8080 == 0x80 { // two bytes: many time deltas
				v, i = x&0x7f|x>>1&0x3f80, i+2
			} else if v, n = varint8(x); n > 0 {
				i += n
			} else if v, i = varint(b, i); i < 0 {
				return nil, errVarint
			}
		} else if v, i = varint(b, i); i < 0 {
			return nil, errVarint
		}
		vals[f] = v
	}
	if mask&(1<<fHashPost|1<<fHashDone) != 0 {
		var ok bool
		if i, ok = d.hashes(vals, mask, i); !ok {
			return nil, errTruncatedHash
		}
	}
	if mask&(1<<fReqs) == 0 && len(c.reqs) == 0 {
		return nil, errors.New("corrupt request context")
	}
	t := &c.tmpl
	if !c.tmplOK {
		if err := d.cold(c, op, done); err != nil {
			return nil, err
		}
	} else {
		for m := mask & coldBits; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			if i == fTag { // a ring's, every round: inline
				var err error
				if t.Tag, err = i32(unzz(vals[fTag])); err != nil {
					return nil, err
				}
				continue
			}
			if err := d.coldField(t, i, vals[i]); err != nil {
				return nil, err
			}
		}
	}
	st := &d.st
	if done && d.skip.left > 0 {
		// A Done the reader leaves out: what the decoder's state and
		// skipState need.
		d.pos = i
		d.left--
		t.Op = op
		t.Seq = st.next - 1 - uint64(unzz(vals[fSeq]))
		st.lastVT += unzz(vals[fDoneVT])
		st.lastWall += unzz(vals[fDoneWall])
		sk := &d.skip
		sk.left--
		sk.n++
		sk.lastSeq, sk.lastOp = t.Seq, op
		goto again
	}
	// Reqs, relative to the request state before this event: before the
	// state advances (their error leaves it as it was).
	if enc := c.reqs; len(enc) != 1 || enc[0] != 0 {
		var err error
		if reqs, err = decodeReqs(reqs, enc, st.lastReq); err != nil {
			return nil, err
		}
	}
	d.pos = i
	d.left--
	// The hot fields, inverting transform, and the state after the event.
	t.Op = op // contexts are by Op&63
	t.Reqs = reqs
	t.HashPost = vals[fHashPost]
	t.HashDone = vals[fHashDone]
	if done {
		t.Seq = st.next - 1 - uint64(unzz(vals[fSeq]))
		t.PostVT = unzz(vals[fPostVT])
		t.PostWall = unzz(vals[fPostWall])
		t.DoneVT = st.lastVT + unzz(vals[fDoneVT])
		t.DoneWall = st.lastWall + unzz(vals[fDoneWall])
		t.MatchVT = t.DoneVT - unzz(vals[fMatchVT])
		t.MatchSeq = t.Seq + uint64(unzz(vals[fMatchSeq]))
		t.Req = vals[fReq]
		st.lastVT, st.lastWall = t.DoneVT, t.DoneWall
		return t, nil
	}
	t.Seq = st.next + uint64(unzz(vals[fSeq]))
	t.PostVT = st.lastVT + unzz(vals[fPostVT])
	t.PostWall = st.lastWall + unzz(vals[fPostWall])
	t.DoneVT = unzz(vals[fDoneVT])
	t.DoneWall = unzz(vals[fDoneWall])
	t.MatchVT = unzz(vals[fMatchVT])
	t.MatchSeq = vals[fMatchSeq]
	t.Req = reqInverse(vals[fReq], st.lastReq)
	st.next = t.Seq + 1
	st.lastVT, st.lastWall = t.PostVT, t.PostWall
	if t.Req != 0 {
		st.lastReq = t.Req
	}
	return t, nil
}

// reqsField reads the Reqs field at d.data[i:] into c.reqs, as encoded (see
// appendReqs), and returns the index after it.
func (d *decoder) reqsField(c *context, i int) (int, error) {
	b := d.data
	start := i
	n, i := varint(b, i)
	if i < 0 {
		return i, errVarint
	}
	if n > maxReqs || n > uint64(len(b)-i) {
		return i, fmt.Errorf("bad request count %d", n)
	}
	for j := uint64(0); j < n; j++ {
		if _, i = varint(b, i); i < 0 {
			return i, errVarint
		}
	}
	c.reqs = append(c.reqs[:0], b[start:i]...)
	return i, nil
}

// hashes reads the hashes of mask at b[i:] into vals and returns the index
// after them; false if they are cut short.
func (d *decoder) hashes(vals *[nFields]uint64, mask uint64, i int) (int, bool) {
	b := d.data
	if mask&(1<<fHashPost) != 0 {
		if len(b)-i < 8 {
			return i, false
		}
		vals[fHashPost] = binary.LittleEndian.Uint64(b[i:])
		i += 8
	}
	if mask&(1<<fHashDone) != 0 {
		if len(b)-i < 8 {
			return i, false
		}
		vals[fHashDone] = binary.LittleEndian.Uint64(b[i:])
		i += 8
	}
	return i, true
}

// varint reads the varint at b[i:] and returns it and the index after it,
// or a negative index if it is cut short or overlong, as binary.Uvarint.
// Its one-byte case, most fields', is written out where it is hot:
//
//	if i < len(b) && b[i] < 0x80 { v, i = uint64(b[i]), i+1 } else { v, i = varint(b, i) }
func varint(b []byte, i int) (uint64, int) {
	if i >= 0 && len(b)-i >= 8 {
		if v, n := varint8(binary.LittleEndian.Uint64(b[i:])); n > 0 {
			return v, i + n
		}
	}
	if uint(i) >= uint(len(b)) {
		return 0, -1
	}
	v, k := binary.Uvarint(b[i:])
	if k <= 0 {
		return 0, -1
	}
	return v, i + k
}

// varint8 decodes the varint x starts with, eight bytes of a block read at
// once (little endian), and returns it and its length: up to eight bytes,
// 56 bits; 0 if it is longer.
func varint8(x uint64) (uint64, int) {
	if x&0x80 == 0 {
		return x & 0x7f, 1
	}
	stop := ^x & 0x8080808080808080 // the bytes without the continuation bit
	if stop == 0 {
		return 0, 0
	}
	x &= stop&-stop - 1 // the varint's bytes; then their 7-bit groups together
	x = x&0x007f007f007f007f | x&0x7f007f007f007f00>>1
	x = x&0x00003fff00003fff | x&0x3fff00003fff0000>>2
	x = x&0x000000000fffffff | x&0x0fffffff00000000>>4
	return x, (bits.TrailingZeros64(stop) + 1) >> 3
}

// cold decodes the context's Kind, Rank and cold fields into its tmpl.
func (d *decoder) cold(c *context, op Op, done bool) error {
	t := &c.tmpl
	*t = Event{Kind: KindPost, Rank: d.rank, Op: op}
	if done {
		t.Kind = KindDone
	}
	for i := fPeer; i < fHashPost; i++ {
		if err := d.coldField(t, i, c.vals[i]); err != nil {
			return err
		}
	}
	c.tmplOK = true
	return nil
}

var errRange = errors.New("field value out of range")

// i32 is an int32 field of value x (zz of a value that must fit).
func i32(x int64) (int32, error) {
	if int64(int32(x)) != x {
		return 0, errRange
	}
	return int32(x), nil
}

// coldField decodes cold field i of transformed value v into t.
func (d *decoder) coldField(t *Event, i int, v uint64) error {
	var err error
	switch i {
	case fPeer:
		t.Peer, err = i32(unzz(v))
	case fTag:
		t.Tag, err = i32(unzz(v))
	case fBytes:
		t.Bytes = unzz(v)
	case fCount:
		t.Count = unzz(v)
	case fDtype:
		if v > math.MaxUint8 {
			return errRange
		}
		t.Dtype = Dtype(v)
	case fSite:
		if v > math.MaxUint32 {
			return errRange
		}
		t.Site = uint32(v)
	case fMatchRank:
		t.MatchRank, err = i32(unzz(v) + int64(d.rank))
	case fSource:
		t.Source, err = i32(unzz(v))
	case fStatusTag:
		t.StatusTag, err = i32(unzz(v))
	case fStatusCnt:
		t.StatusCnt = unzz(v)
	case fComm:
		t.Comm, err = i32(unzz(v))
	case fStream:
		t.Stream, err = i32(unzz(v))
	case fGroup:
		t.Group, err = i32(unzz(v))
	case fAlloc:
		if v > math.MaxUint32 {
			return errRange
		}
		t.Alloc = uint32(v)
	case fOffset:
		t.Offset = unzz(v)
	case fLength:
		t.Length = unzz(v)
	case fDuration:
		t.Duration = unzz(v)
	case fFlag:
		if v > 1 {
			return errRange
		}
		t.Flag = v == 1
	case fIndex:
		t.Index, err = i32(unzz(v))
	case fErr:
		if v > math.MaxUint8 {
			return errRange
		}
		t.Err = ErrCode(v)
	}
	return err
}

// decodeReqs appends to dst the requests of enc, an encoded Reqs (see
// appendReqs) relative to last.
func decodeReqs(dst []uint64, enc []byte, last uint64) ([]uint64, error) {
	n, i := varint(enc, 0)
	if i < 0 {
		return dst, errCorruptReqs
	}
	prev := last
	for j := uint64(0); j < n; j++ {
		var dl uint64
		if i < len(enc) && enc[i] < 0x80 {
			dl, i = uint64(enc[i]), i+1
		} else if dl, i = varint(enc, i); i < 0 {
			return dst, errCorruptReqs
		}
		prev += uint64(unzz(dl))
		dst = append(dst, prev)
	}
	return dst, nil
}

var errCorruptReqs = errors.New("corrupt request list")
