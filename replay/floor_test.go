package replay_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkAllToAllFloor is not p2ptrace: it is the least a replay of
// BenchmarkReplayAllToAll's schedule can cost on this machine, the yardstick
// for issue 14's all-to-all row. It does only what no replay can skip, with
// 40-byte records in flat arrays reused from run to run (no collector, no
// page faults): the ranks post in rounds, each round's posts in the order
// of seeded random ties (as the engine's same-time events go: which is
// what makes every access a random one), each send is filed under its
// receiver and source, each receive takes the first from its source and
// completes in the random order of its own ties, and each rank's waitall
// reads its requests' states. Loads of what the entry 8 ahead will touch
// overlap the misses (as the engine's forecasts do). Its memory is touched
// once before the clock starts: the floor of a warm replay (a fresh
// process pays first touches on top). Run with -test.benchtime 3x; the
// 128-byte records are the engine's Op's size (192 bytes until 2026-12-06).
func BenchmarkAllToAllFloor(b *testing.B) {
	for _, c := range []struct{ ranks, pad int }{{1024, 0}, {1024, 88}, {1024, 152}} {
		b.Run(fmt.Sprintf("ranks=%d/record=%dB", c.ranks, 40+c.pad), func(b *testing.B) {
			switch c.pad {
			case 0:
				benchFloor[floorMsg](b, c.ranks)
			case 88:
				benchFloor[floorMsg128](b, c.ranks)
			default:
				benchFloor[floorMsgPadded](b, c.ranks)
			}
		})
	}
}

// floorMsg is a message or request: its envelope, size, time, state and
// the next of its receiver's queue from its source.
type floorMsg struct {
	src, dst, tag, comm int32
	bytes, t            int64
	done                uint32
	next                int32
}

type floorMsgPadded struct {
	floorMsg
	_ [152]byte
}

// floorMsg128 is a record of the engine's Op's size.
type floorMsg128 struct {
	floorMsg
	_ [88]byte
}

type floorRecord interface {
	floorMsg | floorMsg128 | floorMsgPadded
}

// floorEnt is an entry of a round: a random tie and what it stands for.
type floorEnt struct {
	tie uint64
	ref uint32
}

// floorRound orders a round's entries by tie: a counting sort on the top 10
// bits, then insertion (the buckets hold one or two).
type floorRound struct {
	ents, tmp []floorEnt
	count     [1025]int32
}

func (g *floorRound) reset() { g.ents = g.ents[:0] }

// deal starts a round of posts: each of n ranks with a fresh tie.
func (g *floorRound) deal(rng *rand.Rand, n int) {
	g.reset()
	for r := range n {
		g.push(rng.Uint64(), uint32(r))
	}
}

func (g *floorRound) push(tie uint64, ref uint32) { g.ents = append(g.ents, floorEnt{tie, ref}) }

func (g *floorRound) sort() {
	n := len(g.ents)
	g.tmp = append(g.tmp[:0], g.ents...)
	clear(g.count[:])
	for _, e := range g.ents {
		g.count[e.tie>>54+1]++
	}
	for i := 1; i < len(g.count); i++ {
		g.count[i] += g.count[i-1]
	}
	for _, e := range g.ents {
		k := e.tie >> 54
		g.tmp[g.count[k]] = e
		g.count[k]++
	}
	for i := 1; i < n; i++ {
		x, j := g.tmp[i], i
		for j > 0 && g.tmp[j-1].tie > x.tie {
			g.tmp[j] = g.tmp[j-1]
			j--
		}
		g.tmp[j] = x
	}
	g.ents, g.tmp = g.tmp, g.ents
}

// each calls do for the entries in tie order, and ahead for the one 8
// further on.
func (g *floorRound) each(do, ahead func(ref uint32)) {
	g.sort()
	for i, e := range g.ents {
		if i+8 < len(g.ents) {
			ahead(g.ents[i+8].ref)
		}
		do(e.ref)
	}
}

func benchFloor[R floorRecord](b *testing.B, n int) {
	msgs := make([]R, 0, 2*n*(n-1))
	head := make([]int32, n*n) // receiver x source: first unexpected
	tail := make([]int32, n*n)
	reqs := make([][]int32, n)
	for r := range reqs {
		reqs[r] = make([]int32, 0, 2*n)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var posts, later floorRound
	var sink int64
	msg := func(i int32) *floorMsg {
		switch p := any(&msgs[i]).(type) {
		case *floorMsg:
			return p
		case *floorMsg128:
			return &p.floorMsg
		case *floorMsgPadded:
			return &p.floorMsg
		}
		panic("unreachable")
	}
	var events int64
	run := func() {
		msgs = msgs[:0]
		for i := range head {
			head[i], tail[i] = -1, -1
		}
		for r := range reqs {
			reqs[r] = reqs[r][:0]
		}
		// The sends: round k, each rank's k-th Isend, filed at its
		// receiver when the round's arrivals come, in their own tie order.
		for k := int32(1); k < int32(n); k++ {
			posts.deal(rng, n)
			later.reset()
			posts.each(func(ref uint32) {
				r := int32(ref)
				var m R
				msgs = append(msgs, m)
				id := int32(len(msgs) - 1)
				*msg(id) = floorMsg{src: r, dst: (r + k) % int32(n), bytes: 64, t: int64(k), next: -1}
				reqs[r] = append(reqs[r], id)
				later.push(rng.Uint64(), uint32(id))
			}, func(uint32) {})
			later.each(func(ref uint32) {
				m := msg(int32(ref))
				slot := int(m.dst)*n + int(m.src)
				if head[slot] < 0 {
					head[slot] = int32(ref)
				} else {
					msg(tail[slot]).next = int32(ref)
				}
				tail[slot] = int32(ref)
			}, func(ref uint32) {
				m := msg(int32(ref))
				if t := tail[int(m.dst)*n+int(m.src)]; t >= 0 {
					sink += msg(t).bytes
				}
			})
		}
		// The receives: round j, each rank's j-th Irecv takes the first
		// message from its source; the completions follow in tie order.
		for j := int32(1); j < int32(n); j++ {
			posts.deal(rng, n)
			later.reset()
			posts.each(func(ref uint32) {
				r := int32(ref)
				s := (r - j + int32(n)) % int32(n)
				slot := int(r)*n + int(s)
				id := head[slot]
				m := msg(id)
				head[slot] = m.next
				m.done = 1
				var rec R
				msgs = append(msgs, rec)
				rid := int32(len(msgs) - 1)
				*msg(rid) = floorMsg{src: s, dst: r, bytes: m.bytes, t: int64(j), next: -1}
				reqs[r] = append(reqs[r], rid)
				later.push(rng.Uint64(), uint32(rid))
			}, func(ref uint32) {
				r := int32(ref)
				s := (r - j + int32(n)) % int32(n)
				if id := head[int(r)*n+int(s)]; id >= 0 {
					sink += msg(id).bytes
				}
			})
			later.each(func(ref uint32) { msg(int32(ref)).done = 1 },
				func(ref uint32) { sink += int64(msg(int32(ref)).done) })
		}
		// The waitalls.
		for r := range n {
			for _, id := range reqs[r] {
				if msg(id).done == 0 {
					b.Fatalf("rank %d: request %d not done", r, id)
				}
			}
		}
		events += int64(n) * int64(2*(n-1)+1)
	}
	run() // (its memory touched before the clock starts: a floor of the warm case)
	events = 0
	for b.Loop() {
		run()
	}
	if sink == -1 {
		b.Log(sink) // (keeps the loads)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}
