package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// The block encoder is tuned for speed; its output must stay the FORMAT's,
// byte for byte. oracleEncoder is the encoder as it was before that tuning
// (commit 23ddcae: every field transformed, then compared), kept here,
// self-contained, as the definition the fast one is checked against.
type oracleEncoder struct {
	rank int32
	buf  []byte
	n    int
	gen  uint32
	st   timeState
	ctx  [nContexts]*oracleContext
	vals [nFields]uint64
	reqs []byte
}

type oracleContext struct {
	gen  uint32
	vals [nFields]uint64
	reqs []byte
}

func (e *oracleEncoder) reset() {
	e.buf = append(e.buf[:0], make([]byte, blockHeaderMax)...)
	e.n = 0
	e.gen++
	e.st = timeState{}
}

func oracleZZ(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func oracleReq(req, last uint64) uint64 {
	if req == 0 {
		return 0
	}
	u := oracleZZ(int64(req - last))
	if u0 := oracleZZ(int64(-last)); u < u0 {
		return u + 1
	}
	return u
}

func (e *oracleEncoder) transform(ev *Event) {
	v, st := &e.vals, &e.st
	if ev.Kind == KindDone {
		v[fSeq] = oracleZZ(int64(st.next - 1 - ev.Seq))
		v[fPostVT] = oracleZZ(ev.PostVT)
		v[fPostWall] = oracleZZ(ev.PostWall)
		v[fDoneVT] = oracleZZ(ev.DoneVT - st.lastVT)
		v[fDoneWall] = oracleZZ(ev.DoneWall - st.lastWall)
		v[fMatchVT] = oracleZZ(ev.DoneVT - ev.MatchVT)
		v[fMatchSeq] = oracleZZ(int64(ev.MatchSeq - ev.Seq))
		v[fReq] = ev.Req
	} else {
		v[fSeq] = oracleZZ(int64(ev.Seq - st.next))
		v[fPostVT] = oracleZZ(ev.PostVT - st.lastVT)
		v[fPostWall] = oracleZZ(ev.PostWall - st.lastWall)
		v[fDoneVT] = oracleZZ(ev.DoneVT)
		v[fDoneWall] = oracleZZ(ev.DoneWall)
		v[fMatchVT] = oracleZZ(ev.MatchVT)
		v[fMatchSeq] = ev.MatchSeq
		v[fReq] = oracleReq(ev.Req, st.lastReq)
	}
	v[fReqs] = 0
	v[fPeer] = oracleZZ(int64(ev.Peer))
	v[fTag] = oracleZZ(int64(ev.Tag))
	v[fBytes] = oracleZZ(ev.Bytes)
	v[fCount] = oracleZZ(ev.Count)
	v[fDtype] = uint64(ev.Dtype)
	v[fSite] = uint64(ev.Site)
	v[fMatchRank] = oracleZZ(int64(ev.MatchRank) - int64(e.rank))
	v[fSource] = oracleZZ(int64(ev.Source))
	v[fStatusTag] = oracleZZ(int64(ev.StatusTag))
	v[fStatusCnt] = oracleZZ(ev.StatusCnt)
	v[fComm] = oracleZZ(int64(ev.Comm))
	v[fStream] = oracleZZ(int64(ev.Stream))
	v[fGroup] = oracleZZ(int64(ev.Group))
	v[fAlloc] = uint64(ev.Alloc)
	v[fOffset] = oracleZZ(ev.Offset)
	v[fLength] = oracleZZ(ev.Length)
	v[fDuration] = oracleZZ(ev.Duration)
	v[fFlag] = 0
	if ev.Flag {
		v[fFlag] = 1
	}
	v[fIndex] = oracleZZ(int64(ev.Index))
	v[fErr] = uint64(ev.Err)
	v[fHashPost] = ev.HashPost
	v[fHashDone] = ev.HashDone
}

func (e *oracleEncoder) encode(ev *Event) {
	done := ev.Kind == KindDone
	ci := int(ev.Op) & 63
	if done {
		ci |= 64
	}
	c := e.ctx[ci]
	if c == nil {
		c = &oracleContext{}
		e.ctx[ci] = c
	}
	if c.gen != e.gen {
		*c = oracleContext{gen: e.gen, reqs: append(c.reqs[:0], 0)}
	}
	e.transform(ev)
	var mask uint64
	for i := range nFields {
		if e.vals[i] != c.vals[i] {
			mask |= 1 << i
		}
	}
	e.reqs = binary.AppendUvarint(e.reqs[:0], uint64(len(ev.Reqs)))
	prev := e.st.lastReq
	for _, r := range ev.Reqs {
		e.reqs = binary.AppendUvarint(e.reqs, oracleZZ(int64(r-prev)))
		prev = r
	}
	if !bytes.Equal(e.reqs, c.reqs) {
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
	if done {
		e.st.lastVT, e.st.lastWall = ev.DoneVT, ev.DoneWall
		return
	}
	e.st.next = ev.Seq + 1
	e.st.lastVT, e.st.lastWall = ev.PostVT, ev.PostWall
	if ev.Req != 0 {
		e.st.lastReq = ev.Req
	}
}

func (e *oracleEncoder) finish() []byte {
	h := binary.AppendUvarint(nil, uint64(uint32(e.rank)))
	h = binary.AppendUvarint(h, uint64(e.n))
	v := append(make([]byte, blockPrefix), h...)
	v = append(v, e.buf[blockHeaderMax:]...)
	binary.LittleEndian.PutUint32(v, crc32.Checksum(v[blockPrefix:], castagnoli))
	return v
}

// mutateField sets field f (0 to nFields-1, numbered as the mask) of ev to
// a random value, an edge value or a small step from what it holds.
func mutateField(r *rand.Rand, ev *Event, f int) {
	step := func(x int64) int64 {
		switch r.IntN(3) {
		case 0:
			return x + int64(r.IntN(5)) - 2
		case 1:
			return randI64(r)
		}
		return edge64[r.IntN(len(edge64))]
	}
	i32 := func(x int32) int32 {
		if r.IntN(2) == 0 {
			return x + int32(r.IntN(5)) - 2
		}
		return randI32(r)
	}
	switch f {
	case fPostWall:
		ev.PostWall = step(ev.PostWall)
	case fDoneWall:
		ev.DoneWall = step(ev.DoneWall)
	case fPostVT:
		ev.PostVT = step(ev.PostVT)
	case fDoneVT:
		ev.DoneVT = step(ev.DoneVT)
	case fMatchVT:
		ev.MatchVT = step(ev.MatchVT)
	case fSeq:
		ev.Seq = uint64(step(int64(ev.Seq)))
	case fReq:
		ev.Req = uint64(step(int64(ev.Req)))
		if r.IntN(4) == 0 {
			ev.Req = 0
		}
	case fMatchSeq:
		ev.MatchSeq = uint64(step(int64(ev.MatchSeq)))
	case fReqs:
		switch r.IntN(4) {
		case 0:
			ev.Reqs = nil
		case 1:
			ev.Reqs = []uint64{}
		default:
			reqs := make([]uint64, r.IntN(4))
			for j := range reqs {
				reqs[j] = uint64(step(int64(ev.Req)))
			}
			ev.Reqs = reqs
		}
	case fPeer:
		ev.Peer = i32(ev.Peer)
	case fTag:
		ev.Tag = i32(ev.Tag)
	case fBytes:
		ev.Bytes = step(ev.Bytes)
	case fCount:
		ev.Count = step(ev.Count)
	case fDtype:
		ev.Dtype = Dtype(r.IntN(256))
	case fSite:
		ev.Site = uint32(i32(int32(ev.Site)))
	case fMatchRank:
		ev.MatchRank = i32(ev.MatchRank)
	case fSource:
		ev.Source = i32(ev.Source)
	case fStatusTag:
		ev.StatusTag = i32(ev.StatusTag)
	case fStatusCnt:
		ev.StatusCnt = step(ev.StatusCnt)
	case fComm:
		ev.Comm = i32(ev.Comm)
	case fStream:
		ev.Stream = i32(ev.Stream)
	case fGroup:
		ev.Group = i32(ev.Group)
	case fAlloc:
		ev.Alloc = uint32(i32(int32(ev.Alloc)))
	case fOffset:
		ev.Offset = step(ev.Offset)
	case fLength:
		ev.Length = step(ev.Length)
	case fDuration:
		ev.Duration = step(ev.Duration)
	case fFlag:
		ev.Flag = !ev.Flag
	case fIndex:
		ev.Index = i32(ev.Index)
	case fErr:
		ev.Err = ErrCode(r.IntN(256))
	case fHashPost:
		ev.HashPost = randU64(r)
	case fHashDone:
		ev.HashDone = randU64(r)
	}
}

// codecStreams returns blocks of events (one rank each) that exercise every
// path of the encoder: random events, repeats, streams where a few fields
// change at a time (each field alone, hot and cold), ops that share a
// context (op and op+64), zero events, recorder-like rings, a rank whose
// MatchRank equals it or not, and Reqs that outgrow the block's buffer.
func codecStreams(seed uint64) [][]Event {
	r := rand.New(rand.NewPCG(seed, 42))
	var out [][]Event
	for iter := 0; iter < 60; iter++ {
		rank := int32(r.IntN(1000))
		if iter%5 == 0 {
			rank = int32(r.Uint32() >> 1)
		}
		n := 1 + r.IntN(200)
		evs := make([]Event, 0, n)
		// A few templates; each event copies one and changes 0 to 3 fields.
		tmpl := make([]Event, 1+r.IntN(6))
		for i := range tmpl {
			switch r.IntN(4) {
			case 0:
				tmpl[i] = Event{Kind: KindPost, Rank: rank, Op: Op(r.IntN(256)), MatchRank: rank}
				if r.IntN(2) == 0 {
					tmpl[i].Kind = KindDone
				}
			case 1:
				tmpl[i] = Event{Kind: KindPost, Rank: rank, Op: OpIsend, Peer: rank + 1, Tag: 7, Dtype: Float64, Count: 128, Bytes: 1024, Site: 1, MatchRank: NoRank}
			default:
				tmpl[i] = randEvent(r, rank)
			}
		}
		seq, vt, wall := uint64(r.IntN(100)), int64(r.IntN(1000)), int64(r.IntN(1000))
		for len(evs) < n {
			switch r.IntN(10) {
			case 0:
				evs = append(evs, randEvent(r, rank))
			case 1:
				if len(evs) > 0 {
					ev := evs[r.IntN(len(evs))]
					ev.Reqs = append([]uint64(nil), ev.Reqs...)
					evs = append(evs, ev)
				}
			default:
				ev := tmpl[r.IntN(len(tmpl))]
				ev.Reqs = append([]uint64(nil), ev.Reqs...)
				if r.IntN(2) == 0 {
					// Recorder-like: Seq and times move on by steps that repeat.
					seq++
					vt += int64(r.IntN(3)) * 1000
					wall += int64(100 + r.IntN(3))
					ev.Seq, ev.PostVT, ev.PostWall = seq, vt, wall
					ev.DoneVT, ev.DoneWall, ev.MatchVT = vt+10, wall+20, vt+5
					if ev.Kind == KindPost {
						ev.DoneVT, ev.DoneWall, ev.MatchVT = 0, 0, 0
					}
				}
				if r.IntN(8) == 0 {
					ev.Op ^= 64 // the same context
				}
				for k := r.IntN(4); k > 0; k-- {
					mutateField(r, &ev, r.IntN(nFields))
				}
				if r.IntN(4) == 0 {
					tmpl[r.IntN(len(tmpl))] = ev // the pattern changes
				}
				evs = append(evs, ev)
			}
		}
		out = append(out, evs)
	}
	out = append(out, ringEvents(3, 8, 300), ringEvents(0, 1, 50), []Event{{Kind: KindPost}}, []Event{{Kind: KindDone, Rank: 5, MatchRank: 5}})
	// Reqs longer than a block's buffer: the encoder grows it.
	big := make([]uint64, 12000)
	for i := range big {
		big[i] = uint64(i) * 1000003
	}
	out = append(out, []Event{{Kind: KindPost, Op: OpWaitall, Reqs: big}, {Kind: KindDone, Op: OpWaitall}, {Kind: KindPost, Op: OpWaitall, Reqs: big[:7000]}})
	return out
}

// The fast encoder writes the oracle's bytes for every stream, with one
// encoder reused across blocks (its contexts restart at each reset), both
// told every field may be set (Append) and told the least set of groups
// of each event (AppendFields): the streams' events set and unset groups
// from one event to the next of a context, so the contexts' zero groups
// come and go.
func TestEncoderMatchesOracle(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		var e, d encoder
		var o oracleEncoder
		for bi, evs := range codecStreams(seed) {
			rank := evs[0].Rank
			e.rank, d.rank, o.rank = rank, rank, rank
			e.reset()
			d.reset()
			o.reset()
			for i := range evs {
				e.encode(&evs[i], AllFields)
				d.encode(&evs[i], evs[i].SetFields())
				o.encode(&evs[i])
				if i%37 == 36 {
					// A timed flush finishes the open block and goes on filling it.
					want := o.finish()
					if got := e.finish(); !bytes.Equal(got, want) {
						t.Fatalf("seed %d block %d: partial block after event %d differs", seed, bi, i)
					}
					if got := d.finish(); !bytes.Equal(got, want) {
						t.Fatalf("seed %d block %d: partial block after event %d differs with the fields declared", seed, bi, i)
					}
				}
			}
			got, want := e.finish(), o.finish()
			if got := d.finish(); !bytes.Equal(got, want) {
				t.Fatalf("seed %d block %d (%d events): encoder told the fields set writes other bytes than the oracle", seed, bi, len(evs))
			}
			if !bytes.Equal(got, want) {
				at := 0
				for at < min(len(got), len(want)) && got[at] == want[at] {
					at++
				}
				t.Fatalf("seed %d block %d (%d events): encoder writes %d bytes, oracle %d; first difference at byte %d", seed, bi, len(evs), len(got), len(want), at)
			}
			dec, err := decodeBlock(got)
			if err != nil {
				t.Fatalf("seed %d block %d: decode: %v", seed, bi, err)
			}
			if len(dec) != len(evs) {
				t.Fatalf("seed %d block %d: decoded %d events, want %d", seed, bi, len(dec), len(evs))
			}
		}
	}
}

// The encoded bytes of a fixed set of streams, as written by the encoder of
// commit 23ddcae: pins the format itself, so that encoder and oracle cannot
// drift together.
func TestEncoderGolden(t *testing.T) {
	const want = "66f1df64f03e57aeb9afa3143554cbd4f7aa6ba1c5a1b98d3a949590acafb580"
	h := sha256.New()
	var e encoder
	for seed := uint64(100); seed < 104; seed++ {
		for _, evs := range codecStreams(seed) {
			e.rank = evs[0].Rank
			e.reset()
			for i := range evs {
				e.encode(&evs[i], AllFields)
			}
			h.Write(e.finish())
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("encoded streams hash to %s, want %s", got, want)
	}
}
