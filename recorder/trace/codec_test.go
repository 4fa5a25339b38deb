package trace

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var edge64 = []int64{0, 1, -1, 2, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32, 1 << 40}

func randI64(r *rand.Rand) int64 {
	if r.IntN(3) == 0 {
		return edge64[r.IntN(len(edge64))]
	}
	return int64(r.Uint64()) >> r.IntN(64)
}

func randI32(r *rand.Rand) int32 {
	if r.IntN(4) == 0 {
		return []int32{0, -1, math.MaxInt32, math.MinInt32}[r.IntN(4)]
	}
	return int32(r.Uint32()) >> r.IntN(32)
}

func randU64(r *rand.Rand) uint64 {
	if r.IntN(3) == 0 {
		return []uint64{0, 1, math.MaxUint64, 1 << 63, 1<<63 + 1}[r.IntN(5)]
	}
	return r.Uint64() >> r.IntN(64)
}

// randEvent returns an event with every field random (edge values included).
func randEvent(r *rand.Rand, rank int32) Event {
	ev := Event{
		Kind: Kind(1 + r.IntN(2)), Rank: rank, Seq: randU64(r), Op: Op(r.IntN(256)),
		Peer: randI32(r), Tag: randI32(r), Comm: randI32(r), Stream: randI32(r), Group: randI32(r),
		Dtype: Dtype(r.IntN(256)), Count: randI64(r), Bytes: randI64(r), Alloc: r.Uint32(),
		Offset: randI64(r), Length: randI64(r), Req: randU64(r), Site: r.Uint32(), Duration: randI64(r),
		PostVT: randI64(r), PostWall: randI64(r), MatchVT: randI64(r), DoneVT: randI64(r), DoneWall: randI64(r),
		MatchRank: randI32(r), MatchSeq: randU64(r), Source: randI32(r), StatusTag: randI32(r),
		StatusCnt: randI64(r), Flag: r.IntN(2) == 1, Index: randI32(r), Err: ErrCode(r.IntN(256)),
		HashPost: randU64(r), HashDone: randU64(r),
	}
	for i := r.IntN(4); i > 0; i-- {
		ev.Reqs = append(ev.Reqs, randU64(r))
	}
	return ev
}

func encodeBlock(rank int32, evs []Event) []byte {
	var e encoder
	e.rank = rank
	e.reset()
	for i := range evs {
		e.encode(&evs[i], AllFields)
	}
	return append([]byte(nil), e.finish()...)
}

func decodeBlock(v []byte) ([]Event, error) {
	var d decoder
	if err := d.reset(v); err != nil {
		return nil, err
	}
	var out []Event
	for {
		var ev Event
		ok, err := d.next(&ev)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, ev)
	}
}

func TestCodecRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 100; iter++ {
		rank := int32(r.IntN(1000))
		n := 1 + r.IntN(50)
		evs := make([]Event, n)
		for i := range evs {
			evs[i] = randEvent(r, rank)
			// Repeat previous events sometimes, to exercise the predictions.
			if i > 0 && r.IntN(3) == 0 {
				evs[i] = evs[r.IntN(i)]
				evs[i].Reqs = append([]uint64(nil), evs[i].Reqs...)
			}
		}
		got, err := decodeBlock(encodeBlock(rank, evs))
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		if reflect.DeepEqual(evs, got) {
			continue
		}
		if d := cmp.Diff(evs, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("iter %d: round trip (-want +got):\n%s", iter, d)
		}
	}
}

func TestReqTransformBijection(t *testing.T) {
	lasts := []uint64{0, 1, 5, math.MaxUint64, 1 << 63}
	for _, last := range lasts {
		for _, req := range []uint64{0, 1, 2, last, last + 1, last - 1, last + 1<<63, math.MaxUint64, 1 << 63} {
			if got := reqInverse(reqTransform(req, last), last); got != req {
				t.Errorf("req %d last %d: got %d", req, last, got)
			}
		}
	}
}

func TestDecodeBlockRejectsDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	evs := []Event{randEvent(r, 3), randEvent(r, 3)}
	v := encodeBlock(3, evs)
	for i := range v {
		b := append([]byte(nil), v...)
		b[i] ^= 0x10
		if _, err := decodeBlock(b); err == nil {
			t.Errorf("flip at %d: no error", i)
		}
	}
	for n := 0; n < len(v); n++ {
		if _, err := decodeBlock(v[:n]); err == nil {
			t.Errorf("cut at %d: no error", n)
		}
	}
}

func FuzzDecodeBlock(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 8; i++ {
		evs := make([]Event, 1+i*3)
		for j := range evs {
			evs[j] = randEvent(r, int32(i))
		}
		f.Add(encodeBlock(int32(i), evs))
	}
	f.Add(encodeBlock(0, ringEvents(0, 4, 100)))
	f.Fuzz(func(t *testing.T, v []byte) {
		// Without the checksum, so that the fuzzer reaches the decoder.
		if len(v) >= blockPrefix {
			fixCRC(v)
		}
		evs, err := decodeBlock(v)
		if err != nil {
			return
		}
		// What decodes must encode and decode to the same events.
		if len(evs) > 0 {
			got, err := decodeBlock(encodeBlock(evs[0].Rank, evs))
			if err != nil {
				t.Fatalf("re-decode: %v", err)
			}
			if d := cmp.Diff(evs, got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("re-encode round trip:\n%s", d)
			}
		}
	})
}

// ringEvents is the events of rank of a ring exchange over n ranks.
func ringEvents(rank, n int32, iters int) []Event {
	var evs []Event
	var seq, req uint64
	vt, wall := int64(0), int64(0)
	for i := 0; i < iters; i++ {
		right, left := (rank+1)%n, (rank+n-1)%n
		s, rs := seq, seq+1
		req++
		evs = append(evs, Event{Kind: KindPost, Rank: rank, Seq: seq, Op: OpIsend, Peer: right, Tag: 7, Dtype: Float64, Count: 128, Bytes: 1024, Req: req, Site: 1, PostVT: vt, PostWall: wall, MatchRank: NoRank})
		seq++
		req++
		wall += 150 + int64(i%7)*13
		evs = append(evs, Event{Kind: KindPost, Rank: rank, Seq: seq, Op: OpIrecv, Peer: left, Tag: 7, Dtype: Float64, Count: 128, Bytes: 1024, Req: req, Site: 2, PostVT: vt, PostWall: wall, MatchRank: NoRank})
		seq++
		wall += 120 + int64(i%5)*11
		w := seq
		evs = append(evs, Event{Kind: KindPost, Rank: rank, Seq: seq, Op: OpWaitall, Reqs: []uint64{req - 1, req}, Site: 3, PostVT: vt, PostWall: wall, MatchRank: NoRank})
		seq++
		vt += 2000
		wall += 900 + int64(i%11)*17
		evs = append(evs, Event{Kind: KindDone, Rank: rank, Seq: s, Op: OpIsend, MatchRank: right, MatchSeq: rs, MatchVT: vt - 1000, DoneVT: vt, DoneWall: wall})
		wall += 40
		evs = append(evs, Event{Kind: KindDone, Rank: rank, Seq: rs, Op: OpIrecv, MatchRank: left, MatchSeq: s, MatchVT: vt - 1000, DoneVT: vt, DoneWall: wall, Source: left, StatusTag: 7, StatusCnt: 128})
		wall += 30
		evs = append(evs, Event{Kind: KindDone, Rank: rank, Seq: w, Op: OpWaitall, MatchRank: NoRank, DoneVT: vt, DoneWall: wall})
		wall += 200 + int64(i%3)*50
	}
	return evs
}

func TestRingBlockSize(t *testing.T) {
	evs := ringEvents(1, 8, 1000)
	v := encodeBlock(1, evs)
	per := float64(len(v)) / float64(len(evs))
	t.Logf("%d events, %d bytes, %.2f bytes/event", len(evs), len(v), per)
	if per > 12 {
		t.Errorf("%.2f bytes per event in a ring block, want <= 12", per)
	}
	got, err := decodeBlock(v)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(evs, got) {
		t.Fatal(cmp.Diff(evs, got, cmpopts.EquateEmpty()))
	}
}

func fixCRC(v []byte) {
	binary.LittleEndian.PutUint32(v, crc32.Checksum(v[blockPrefix:], castagnoli))
}

func BenchmarkEncode(b *testing.B) {
	evs := ringEvents(1, 8, 256)
	var e encoder
	e.rank = 1
	e.reset()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(e.buf) > 16<<10 {
			e.finish()
			e.reset()
		}
		e.encode(&evs[i%len(evs)], AllFields)
	}
}

func BenchmarkDecode(b *testing.B) {
	v := encodeBlock(1, ringEvents(1, 8, 256))
	var d decoder
	var ev Event
	b.ResetTimer()
	for i := 0; i < b.N; {
		if err := d.reset(v); err != nil {
			b.Fatal(err)
		}
		for i < b.N {
			ok, err := d.next(&ev)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			i++
		}
	}
}

// varint decodes what binary.Uvarint decodes, overlong and truncated
// encodings included, at every length, with bytes before and after.
func TestVarintAsBinary(t *testing.T) {
	var cases [][]byte
	for _, v := range []uint64{0, 1, 127, 128, 300, 1<<21 - 1, 1 << 21, 1<<28 - 1, 1 << 28, 1<<35 - 1, 1 << 35, 1<<63 + 5, math.MaxUint64} {
		b := binary.AppendUvarint(nil, v)
		cases = append(cases, b, append(b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), b[:len(b)-1])
	}
	cases = append(cases, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0},
		[]byte{0x80, 0x00, 0, 0, 0, 0, 0, 0, 0, 0}, nil)
	for _, c := range cases {
		for _, pre := range []int{0, 3} {
			b := append(make([]byte, pre), c...)
			v, i := varint(b, pre)
			wv, wk := binary.Uvarint(c)
			if wk <= 0 {
				wv, wk = 0, -1-pre
			}
			if v != wv || i != pre+wk {
				t.Errorf("varint(%x, %d) = %d, %d; binary.Uvarint %d, %d", b, pre, v, i, wv, wk)
			}
		}
	}
}
