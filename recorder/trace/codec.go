package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
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

// context is the transformed field values of the previous event of one
// (kind, op) pair in the current block: the prediction for the next one.
type context struct {
	gen       uint32
	vals      [nFields]uint64
	reqs      []byte     // encoded Reqs
	cold      coldFields // encoder only: the raw cold fields of vals
	coldValid bool
	// Decoder only: tmpl is an event whose Kind, Rank and cold fields
	// (fPeer to fErr) are decoded from vals, valid while tmplOK. Most
	// events repeat their context's cold fields (their mask has none of
	// coldBits): the decoder copies tmpl instead of decoding them again.
	tmpl   Event
	tmplOK bool
}

// coldBits are the mask bits of the fields a decoder keeps decoded in its
// context's tmpl: fPeer to fErr (not the hashes, which are stored raw).
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

// encoder packs the events of one rank into a block.
type encoder struct {
	rank int32
	buf  []byte // blockHeaderMax reserved bytes, then the events
	n    int
	gen  uint32
	st   timeState
	ctx  [nContexts]*context
	vals [nFields]uint64
	reqs []byte
}

func (e *encoder) reset() {
	if cap(e.buf) < blockHeaderMax {
		e.buf = make([]byte, blockHeaderMax, 16<<10)
	}
	e.buf = e.buf[:blockHeaderMax]
	e.n = 0
	e.gen++
	e.st = timeState{}
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

// transform computes the transformed field values of ev into vals.
func transform(vals *[nFields]uint64, ev *Event, rank int32, st *timeState) {
	transformHot(vals, ev, st)
	transformCold(vals, ev, rank)
}

// transformHot computes fields 0 to fReqs: the times, Seq, Req, MatchSeq.
func transformHot(vals *[nFields]uint64, ev *Event, st *timeState) {
	if ev.Kind == KindDone {
		vals[fSeq] = zz(int64(st.next - 1 - ev.Seq))
		vals[fPostVT] = zz(ev.PostVT)
		vals[fPostWall] = zz(ev.PostWall)
		vals[fDoneVT] = zz(ev.DoneVT - st.lastVT)
		vals[fDoneWall] = zz(ev.DoneWall - st.lastWall)
		vals[fMatchVT] = zz(ev.DoneVT - ev.MatchVT)
		vals[fMatchSeq] = zz(int64(ev.MatchSeq - ev.Seq))
		vals[fReq] = uint64(ev.Req) // rarely set on a done event: raw
	} else {
		vals[fSeq] = zz(int64(ev.Seq - st.next))
		vals[fPostVT] = zz(ev.PostVT - st.lastVT)
		vals[fPostWall] = zz(ev.PostWall - st.lastWall)
		vals[fDoneVT] = zz(ev.DoneVT)
		vals[fDoneWall] = zz(ev.DoneWall)
		vals[fMatchVT] = zz(ev.MatchVT)
		vals[fMatchSeq] = ev.MatchSeq
		vals[fReq] = reqTransform(ev.Req, st.lastReq)
	}
	vals[fReqs] = 0 // compared as bytes
}

// transformCold computes the fields after fReqs: each a function of one
// field of the event alone (and of the block's rank).
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
	if ev.Flag {
		vals[fFlag] = 1
	} else {
		vals[fFlag] = 0
	}
	vals[fIndex] = zz(int64(ev.Index))
	vals[fErr] = uint64(ev.Err)
	vals[fHashPost] = ev.HashPost
	vals[fHashDone] = ev.HashDone
}

// coldFields is the raw fields transformCold reads: when they equal the
// context's, so do their transforms, and the encoder skips them.
type coldFields struct {
	Peer, Tag, Comm, Stream, Group, Source, StatusTag, MatchRank, Index int32
	Site, Alloc                                                         uint32
	Dtype                                                               Dtype
	Err                                                                 ErrCode
	Flag                                                                bool
	_                                                                   uint8
	Count, Bytes, Offset, Length, Duration, StatusCnt                   int64
	HashPost, HashDone                                                  uint64
}

func coldEqual(p *coldFields, ev *Event) bool {
	return ev.Peer == p.Peer && ev.Tag == p.Tag && ev.Bytes == p.Bytes && ev.Count == p.Count &&
		ev.Dtype == p.Dtype && ev.Site == p.Site && ev.MatchRank == p.MatchRank && ev.Source == p.Source &&
		ev.StatusTag == p.StatusTag && ev.StatusCnt == p.StatusCnt && ev.Comm == p.Comm &&
		ev.Stream == p.Stream && ev.Group == p.Group && ev.Alloc == p.Alloc && ev.Offset == p.Offset &&
		ev.Length == p.Length && ev.Duration == p.Duration && ev.Flag == p.Flag && ev.Index == p.Index &&
		ev.Err == p.Err && ev.HashPost == p.HashPost && ev.HashDone == p.HashDone
}

func coldOf(cf *coldFields, ev *Event) {
	*cf = coldFields{
		Peer: ev.Peer, Tag: ev.Tag, Comm: ev.Comm, Stream: ev.Stream, Group: ev.Group, Source: ev.Source,
		StatusTag: ev.StatusTag, MatchRank: ev.MatchRank, Index: ev.Index, Site: ev.Site, Alloc: ev.Alloc,
		Dtype: ev.Dtype, Err: ev.Err, Flag: ev.Flag, Count: ev.Count, Bytes: ev.Bytes, Offset: ev.Offset,
		Length: ev.Length, Duration: ev.Duration, StatusCnt: ev.StatusCnt, HashPost: ev.HashPost, HashDone: ev.HashDone,
	}
}

func advance(st *timeState, ev *Event) {
	if ev.Kind == KindDone {
		st.lastVT = ev.DoneVT
		st.lastWall = ev.DoneWall
		return
	}
	st.next = ev.Seq + 1
	st.lastVT = ev.PostVT
	st.lastWall = ev.PostWall
	if ev.Req != 0 {
		st.lastReq = ev.Req
	}
}

func (e *encoder) context(i int) *context {
	c := e.ctx[i]
	if c == nil {
		c = &context{}
		e.ctx[i] = c
	}
	if c.gen != e.gen {
		c.gen = e.gen
		c.vals = [nFields]uint64{}
		c.reqs = c.reqs[:0]
		c.reqs = append(c.reqs, 0) // the encoding of no Reqs
		c.coldValid = false
	}
	return c
}

// encode appends ev (whose Kind must be KindPost or KindDone) to the block.
func (e *encoder) encode(ev *Event) {
	done := ev.Kind == KindDone
	c := e.context(ctxIndex(ev.Op, done))
	transformHot(&e.vals, ev, &e.st)
	mask := hotMask(&e.vals, &c.vals)
	if !c.coldValid || !coldEqual(&c.cold, ev) {
		transformCold(&e.vals, ev, e.rank)
		mask |= coldMask(&e.vals, &c.vals)
		coldOf(&c.cold, ev)
		c.coldValid = true
	}
	if len(ev.Reqs) == 0 {
		if len(c.reqs) != 1 || c.reqs[0] != 0 {
			e.reqs = append(e.reqs[:0], 0)
			mask |= 1 << fReqs
			c.reqs = append(c.reqs[:0], 0)
		}
	} else {
		e.reqs = appendReqs(e.reqs[:0], ev.Reqs, e.st.lastReq)
		if string(e.reqs) != string(c.reqs) {
			mask |= 1 << fReqs
			c.reqs = append(c.reqs[:0], e.reqs...)
		}
	}

	tag := uint64(ev.Op) << 1
	if done {
		tag |= 1
	}
	b := binary.AppendUvarint(e.buf, tag)
	b = binary.AppendUvarint(b, mask)
	for m := mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		c.vals[i] = e.vals[i]
		switch i {
		case fReqs:
			b = append(b, e.reqs...)
		case fHashPost, fHashDone:
			b = binary.LittleEndian.AppendUint64(b, e.vals[i])
		default:
			b = binary.AppendUvarint(b, e.vals[i])
		}
	}
	e.buf = b
	e.n++
	advance(&e.st, ev)
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
	data []byte // events not yet decoded
	rank int32
	left int // events not yet decoded
	gen  uint32
	st   timeState
	ctx  [nContexts]*context
	vals [nFields]uint64
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
	d.rank = int32(rank)
	d.left = n
	d.data = body
	d.gen++
	d.st = timeState{}
	return nil
}

func (d *decoder) context(i int) *context {
	c := d.ctx[i]
	if c == nil {
		c = &context{}
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

// uvarint is binary.Uvarint, unrolled for the values of up to five bytes
// that most fields and masks take when ten bytes are readable (inside a
// block, all but its last event).
func uvarint(b []byte) (uint64, int) {
	if len(b) < binary.MaxVarintLen64 {
		return binary.Uvarint(b)
	}
	all := b
	b = b[:binary.MaxVarintLen64]
	x := uint64(b[0])
	if x < 0x80 {
		return x, 1
	}
	x &= 0x7f
	y := uint64(b[1])
	x |= (y & 0x7f) << 7
	if y < 0x80 {
		return x, 2
	}
	y = uint64(b[2])
	x |= (y & 0x7f) << 14
	if y < 0x80 {
		return x, 3
	}
	y = uint64(b[3])
	x |= (y & 0x7f) << 21
	if y < 0x80 {
		return x, 4
	}
	y = uint64(b[4])
	x |= (y & 0x7f) << 28
	if y < 0x80 {
		return x, 5
	}
	return binary.Uvarint(all)
}

// next decodes the next event into ev. It returns false with a nil error at
// the end of the block.
func (d *decoder) next(ev *Event) (bool, error) {
	if d.left == 0 {
		if len(d.data) != 0 {
			return false, errTrailing
		}
		return false, nil
	}
	// p is the rest of the block: a local, stored back once the event is
	// decoded (the decoder's own field would be written at every field).
	p := d.data
	tag, k := uvarint(p)
	if k <= 0 {
		return false, errVarint
	}
	p = p[k:]
	if tag>>1 > math.MaxUint8 {
		return false, fmt.Errorf("bad op %d", tag>>1)
	}
	op, done := Op(tag>>1), tag&1 == 1
	mask, k := uvarint(p)
	if k <= 0 {
		return false, errVarint
	}
	p = p[k:]
	if mask>>nFields != 0 {
		return false, fmt.Errorf("unknown fields in mask %#x", mask)
	}
	c := d.context(ctxIndex(op, done))
	vals := &c.vals
	reqs := ev.Reqs[:0]
	for m := mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		switch i {
		case fReqs:
			start := p
			n, k := uvarint(p)
			if k <= 0 {
				return false, errVarint
			}
			p = p[k:]
			if n > maxReqs || n > uint64(len(p)) {
				return false, fmt.Errorf("bad request count %d", n)
			}
			for j := uint64(0); j < n; j++ {
				_, k := uvarint(p)
				if k <= 0 {
					return false, errVarint
				}
				p = p[k:]
			}
			c.reqs = append(c.reqs[:0], start[:len(start)-len(p)]...)
		case fHashPost, fHashDone:
			if len(p) < 8 {
				return false, errors.New("truncated hash")
			}
			vals[i] = binary.LittleEndian.Uint64(p)
			p = p[8:]
		default:
			v, k := uvarint(p)
			if k <= 0 {
				return false, errVarint
			}
			p = p[k:]
			vals[i] = v
		}
	}
	d.data = p
	if mask&(1<<fReqs) == 0 && len(c.reqs) == 0 {
		return false, errors.New("corrupt request context")
	}
	if !c.tmplOK {
		if err := d.cold(c, op, done); err != nil {
			return false, err
		}
	} else {
		for m := mask & coldBits; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			if err := d.coldField(&c.tmpl, i, vals[i]); err != nil {
				return false, err
			}
		}
	}
	if err := d.build(ev, c, op, done, reqs); err != nil {
		return false, err
	}
	d.left--
	advance(&d.st, ev)
	return true, nil
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

// coldField decodes cold field i of transformed value v into t.
func (d *decoder) coldField(t *Event, i int, v uint64) error {
	// The int32 fields: zz of a value that must fit.
	i32 := func(x int64) (int32, error) {
		if int64(int32(x)) != x {
			return 0, errRange
		}
		return int32(x), nil
	}
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

// build inverts transform: the context's tmpl (see cold), then the hot
// fields, the hashes and Reqs (into reqs, the caller's buffer).
func (d *decoder) build(ev *Event, c *context, op Op, done bool, reqs []uint64) error {
	st := &d.st
	v := &c.vals
	*ev = c.tmpl
	ev.Op = op // contexts are by Op&63
	ev.Reqs = reqs
	ev.HashPost = v[fHashPost]
	ev.HashDone = v[fHashDone]
	if done {
		ev.Seq = st.next - 1 - uint64(unzz(v[fSeq]))
		ev.PostVT = unzz(v[fPostVT])
		ev.PostWall = unzz(v[fPostWall])
		ev.DoneVT = st.lastVT + unzz(v[fDoneVT])
		ev.DoneWall = st.lastWall + unzz(v[fDoneWall])
		ev.MatchVT = ev.DoneVT - unzz(v[fMatchVT])
		ev.MatchSeq = ev.Seq + uint64(unzz(v[fMatchSeq]))
		ev.Req = v[fReq]
	} else {
		ev.Seq = st.next + uint64(unzz(v[fSeq]))
		ev.PostVT = st.lastVT + unzz(v[fPostVT])
		ev.PostWall = st.lastWall + unzz(v[fPostWall])
		ev.DoneVT = unzz(v[fDoneVT])
		ev.DoneWall = unzz(v[fDoneWall])
		ev.MatchVT = unzz(v[fMatchVT])
		ev.MatchSeq = v[fMatchSeq]
		ev.Req = reqInverse(v[fReq], st.lastReq)
	}
	encReqs := c.reqs
	if len(encReqs) == 1 && encReqs[0] == 0 {
		return nil
	}
	// Reqs, relative to the request state before this event.
	p := encReqs
	n, k := binary.Uvarint(p)
	if k <= 0 {
		return errors.New("corrupt request list")
	}
	p = p[k:]
	prev := st.lastReq
	for j := uint64(0); j < n; j++ {
		dl, k := binary.Uvarint(p)
		if k <= 0 {
			return errors.New("corrupt request list")
		}
		p = p[k:]
		prev += uint64(unzz(dl))
		ev.Reqs = append(ev.Reqs, prev)
	}
	return nil
}

// nz is 1 if x is nonzero, else 0.
func nz(x uint64) uint64 { return (x | -x) >> 63 }

// hotMask has bit i set where a[i] != b[i], for the fields before fReqs
// (unrolled: constant shifts).
func hotMask(a, b *[nFields]uint64) uint64 {
	return nz(a[0]^b[0])<<0 |
		nz(a[1]^b[1])<<1 |
		nz(a[2]^b[2])<<2 |
		nz(a[3]^b[3])<<3 |
		nz(a[4]^b[4])<<4 |
		nz(a[5]^b[5])<<5 |
		nz(a[6]^b[6])<<6 |
		nz(a[7]^b[7])<<7
}

// coldMask is hotMask for the fields after fReqs.
func coldMask(a, b *[nFields]uint64) uint64 {
	return nz(a[9]^b[9])<<9 |
		nz(a[10]^b[10])<<10 |
		nz(a[11]^b[11])<<11 |
		nz(a[12]^b[12])<<12 |
		nz(a[13]^b[13])<<13 |
		nz(a[14]^b[14])<<14 |
		nz(a[15]^b[15])<<15 |
		nz(a[16]^b[16])<<16 |
		nz(a[17]^b[17])<<17 |
		nz(a[18]^b[18])<<18 |
		nz(a[19]^b[19])<<19 |
		nz(a[20]^b[20])<<20 |
		nz(a[21]^b[21])<<21 |
		nz(a[22]^b[22])<<22 |
		nz(a[23]^b[23])<<23 |
		nz(a[24]^b[24])<<24 |
		nz(a[25]^b[25])<<25 |
		nz(a[26]^b[26])<<26 |
		nz(a[27]^b[27])<<27 |
		nz(a[28]^b[28])<<28 |
		nz(a[29]^b[29])<<29 |
		nz(a[30]^b[30])<<30
}
