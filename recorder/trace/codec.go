package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
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
	gen  uint32
	vals [nFields]uint64
	reqs []byte // encoded Reqs
}

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
	done := ev.Kind == KindDone
	if done {
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
	}
	return c
}

// encode appends ev (whose Kind must be KindPost or KindDone) to the block.
func (e *encoder) encode(ev *Event) {
	done := ev.Kind == KindDone
	c := e.context(ctxIndex(ev.Op, done))
	transform(&e.vals, ev, e.rank, &e.st)
	e.reqs = appendReqs(e.reqs[:0], ev.Reqs, e.st.lastReq)

	var mask uint64
	for i := 0; i < nFields; i++ {
		if e.vals[i] != c.vals[i] {
			mask |= 1 << i
		}
	}
	if string(e.reqs) != string(c.reqs) {
		mask |= 1 << fReqs
		c.reqs = append(c.reqs[:0], e.reqs...)
	}
	tag := uint64(ev.Op) << 1
	if done {
		tag |= 1
	}
	b := binary.AppendUvarint(e.buf, tag)
	b = binary.AppendUvarint(b, mask)
	for m := mask; m != 0; m &= m - 1 {
		i := trailingZeros(m)
		switch i {
		case fReqs:
			b = append(b, e.reqs...)
		case fHashPost, fHashDone:
			b = binary.LittleEndian.AppendUint64(b, e.vals[i])
		default:
			b = binary.AppendUvarint(b, e.vals[i])
		}
	}
	c.vals = e.vals
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

func trailingZeros(m uint64) int {
	n := 0
	for m&0xff == 0 {
		m >>= 8
		n += 8
	}
	for m&1 == 0 {
		m >>= 1
		n++
	}
	return n
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
	}
	return c
}

var errTrailing = errors.New("bytes after the last event of the block")

func (d *decoder) uvarint() (uint64, error) {
	v, k := binary.Uvarint(d.data)
	if k <= 0 {
		return 0, errors.New("truncated or overlong varint")
	}
	d.data = d.data[k:]
	return v, nil
}

func toInt32(u uint64, name string) (int32, error) {
	v := unzz(u)
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, fmt.Errorf("%s %d out of range", name, v)
	}
	return int32(v), nil
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
	tag, err := d.uvarint()
	if err != nil {
		return false, err
	}
	if tag>>1 > math.MaxUint8 {
		return false, fmt.Errorf("bad op %d", tag>>1)
	}
	op, done := Op(tag>>1), tag&1 == 1
	mask, err := d.uvarint()
	if err != nil {
		return false, err
	}
	if mask>>nFields != 0 {
		return false, fmt.Errorf("unknown fields in mask %#x", mask)
	}
	c := d.context(ctxIndex(op, done))
	d.vals = c.vals
	reqs := ev.Reqs[:0]
	for m := mask; m != 0; m &= m - 1 {
		i := trailingZeros(m)
		switch i {
		case fReqs:
			start := d.data
			n, err := d.uvarint()
			if err != nil {
				return false, err
			}
			if n > maxReqs || n > uint64(len(d.data)) {
				return false, fmt.Errorf("bad request count %d", n)
			}
			for j := uint64(0); j < n; j++ {
				if _, err := d.uvarint(); err != nil {
					return false, err
				}
			}
			c.reqs = append(c.reqs[:0], start[:len(start)-len(d.data)]...)
		case fHashPost, fHashDone:
			if len(d.data) < 8 {
				return false, errors.New("truncated hash")
			}
			d.vals[i] = binary.LittleEndian.Uint64(d.data)
			d.data = d.data[8:]
		default:
			v, err := d.uvarint()
			if err != nil {
				return false, err
			}
			d.vals[i] = v
		}
	}
	if mask&(1<<fReqs) == 0 && len(c.reqs) == 0 {
		return false, errors.New("corrupt request context")
	}
	if err := d.build(ev, op, done, reqs, c.reqs); err != nil {
		return false, err
	}
	c.vals = d.vals
	d.left--
	advance(&d.st, ev)
	return true, nil
}

// build inverts transform.
func (d *decoder) build(ev *Event, op Op, done bool, reqs []uint64, encReqs []byte) error {
	v := &d.vals
	st := &d.st
	var err error
	get32 := func(i int, name string) int32 {
		if err != nil {
			return 0
		}
		var x int32
		x, err = toInt32(v[i], name)
		return x
	}
	*ev = Event{Reqs: reqs}
	ev.Rank = d.rank
	ev.Op = op
	if done {
		ev.Kind = KindDone
		ev.Seq = st.next - 1 - uint64(unzz(v[fSeq]))
		ev.PostVT = unzz(v[fPostVT])
		ev.PostWall = unzz(v[fPostWall])
		ev.DoneVT = st.lastVT + unzz(v[fDoneVT])
		ev.DoneWall = st.lastWall + unzz(v[fDoneWall])
		ev.MatchVT = ev.DoneVT - unzz(v[fMatchVT])
		ev.MatchSeq = ev.Seq + uint64(unzz(v[fMatchSeq]))
		ev.Req = v[fReq]
	} else {
		ev.Kind = KindPost
		ev.Seq = st.next + uint64(unzz(v[fSeq]))
		ev.PostVT = st.lastVT + unzz(v[fPostVT])
		ev.PostWall = st.lastWall + unzz(v[fPostWall])
		ev.DoneVT = unzz(v[fDoneVT])
		ev.DoneWall = unzz(v[fDoneWall])
		ev.MatchVT = unzz(v[fMatchVT])
		ev.MatchSeq = v[fMatchSeq]
		ev.Req = reqInverse(v[fReq], st.lastReq)
	}
	ev.Peer = get32(fPeer, "peer")
	ev.Tag = get32(fTag, "tag")
	ev.Bytes = unzz(v[fBytes])
	ev.Count = unzz(v[fCount])
	if v[fDtype] > math.MaxUint8 {
		return fmt.Errorf("bad dtype %d", v[fDtype])
	}
	ev.Dtype = Dtype(v[fDtype])
	if v[fSite] > math.MaxUint32 {
		return fmt.Errorf("bad site %d", v[fSite])
	}
	ev.Site = uint32(v[fSite])
	mr := unzz(v[fMatchRank]) + int64(d.rank)
	if mr < math.MinInt32 || mr > math.MaxInt32 {
		return fmt.Errorf("match rank %d out of range", mr)
	}
	ev.MatchRank = int32(mr)
	ev.Source = get32(fSource, "source")
	ev.StatusTag = get32(fStatusTag, "status tag")
	ev.StatusCnt = unzz(v[fStatusCnt])
	ev.Comm = get32(fComm, "communicator")
	ev.Stream = get32(fStream, "stream")
	ev.Group = get32(fGroup, "group")
	if v[fAlloc] > math.MaxUint32 {
		return fmt.Errorf("bad allocation %d", v[fAlloc])
	}
	ev.Alloc = uint32(v[fAlloc])
	ev.Offset = unzz(v[fOffset])
	ev.Length = unzz(v[fLength])
	ev.Duration = unzz(v[fDuration])
	switch v[fFlag] {
	case 0:
	case 1:
		ev.Flag = true
	default:
		return fmt.Errorf("bad flag %d", v[fFlag])
	}
	ev.Index = get32(fIndex, "index")
	if v[fErr] > math.MaxUint8 {
		return fmt.Errorf("bad error code %d", v[fErr])
	}
	ev.Err = ErrCode(v[fErr])
	ev.HashPost = v[fHashPost]
	ev.HashDone = v[fHashDone]
	if err != nil {
		return err
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
