package replay_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// writeRing writes a ring trace of ranks ranks (posts and dones, as a
// recorder would) with iters rounds, rank skip left without events, and
// returns its events by rank.
func writeRing(t *testing.T, path string, ranks, iters, skip int) replay.Events {
	t.Helper()
	w, err := trace.Create(path, trace.Header{WorldSize: ranks}, trace.WriterOptions{NoSync: true, BlockSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	evs := make(replay.Events, ranks)
	for r := range ranks {
		if r == skip {
			continue
		}
		add := func(e trace.Event) {
			e.Rank = int32(r)
			evs[r] = append(evs[r], e)
			w.Append(&e)
		}
		right, left := int32((r+1)%ranks), int32((r+ranks-1)%ranks)
		seq := uint64(0)
		for i := range uint64(iters) {
			add(trace.Event{Kind: trace.KindPost, Seq: seq, Op: trace.OpIsend, Peer: right, Dtype: trace.Uint8, Count: 64, Bytes: 64, Req: 2*i + 1, Tag: int32(i)})
			add(trace.Event{Kind: trace.KindPost, Seq: seq + 1, Op: trace.OpIrecv, Peer: left, Dtype: trace.Uint8, Count: 64, Bytes: 64, Req: 2*i + 2, Tag: int32(i)})
			add(trace.Event{Kind: trace.KindPost, Seq: seq + 2, Op: trace.OpWaitall, Reqs: []uint64{2*i + 1, 2*i + 2}})
			add(trace.Event{Kind: trace.KindDone, Seq: seq + 2, Op: trace.OpWaitall, MatchRank: trace.NoRank})
			seq += 3
		}
		add(trace.Event{Kind: trace.KindPost, Seq: seq, Op: trace.OpFinalize})
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	return evs
}

// A trace file's Source hands out each rank's events in order, whatever
// order the ranks are read in and however the decoders run ahead: through
// Next and in place, across batch ends, for a rank without events too.
func TestFileSourceReadsEveryRankInOrder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ring.p2ptrace")
	const ranks = 2000 // batches of 16 events: a few per rank
	want := writeRing(t, path, ranks, 9, 7)
	tr, err := replay.OpenTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	src, err := tr.Open()
	if err != nil {
		t.Fatal(err)
	}
	got := make(replay.Events, ranks)
	rng := rand.New(rand.NewPCG(1, 2))
	open := make([]int, ranks)
	for r := range open {
		open[r] = r
	}
	var ev trace.Event
	for len(open) > 0 {
		i := rng.IntN(len(open))
		r := open[i]
		if !src.Next(r, &ev) {
			open[i] = open[len(open)-1]
			open = open[:len(open)-1]
			continue
		}
		e := ev
		e.Reqs = append([]uint64(nil), ev.Reqs...)
		got[r] = append(got[r], e)
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	for r := range ranks {
		if len(got[r]) != len(want[r]) {
			t.Fatalf("rank %d: %d events, want %d", r, len(got[r]), len(want[r]))
		}
		for i := range want[r] {
			w, g := want[r][i], got[r][i]
			if len(w.Reqs) == 0 && len(g.Reqs) == 0 {
				w.Reqs, g.Reqs = nil, nil
			}
			if !reflect.DeepEqual(w, g) {
				t.Fatalf("rank %d event %d:\n got %+v\nwant %+v", r, i, g, w)
			}
		}
	}
}

// A replay from the file is the replay from memory: same outcome.
func TestFileReplayIsMemoryReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.p2ptrace")
	evs := writeRing(t, path, 64, 20, -1)
	tr, err := replay.OpenTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for seed := range uint64(3) {
		src, err := tr.Open()
		if err != nil {
			t.Fatal(err)
		}
		cfg := replay.Config{Seed: seed}
		fromFile, err := replay.Replay(src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		fromMemory, err := replay.Replay(evs.Source(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if fromFile.Events != fromMemory.Events || fromFile.Stuck != fromMemory.Stuck ||
			len(fromFile.Problems) != len(fromMemory.Problems) || fromFile.Events != 64*(4*20+1) {
			t.Fatalf("seed %d: from the file %d events (stuck %v, %d problems), from memory %d (%v, %d)", seed,
				fromFile.Events, fromFile.Stuck, len(fromFile.Problems), fromMemory.Events, fromMemory.Stuck, len(fromMemory.Problems))
		}
	}
}

// Sources dropped midway (as a lookup or an abandoned replay leaves them)
// do not keep their decoders: Close stops them, and returns.
func TestDroppedSourcesStopAtClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.p2ptrace")
	writeRing(t, path, 16, 200, -1)
	before := runtime.NumGoroutine()
	tr, err := replay.OpenTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	var ev trace.Event
	for range 20 {
		src, err := tr.Open()
		if err != nil {
			t.Fatal(err)
		}
		src.Next(3, &ev) // the decoders are now ahead, waiting
	}
	done := make(chan error, 1)
	go func() { done <- tr.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs on the decoders of dropped Sources")
	}
	for i := 0; runtime.NumGoroutine() > before; i++ {
		if i > 1000 {
			t.Fatalf("%d goroutines after Close, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// A damaged block ends its rank with the error, which Replay returns.
func TestFileSourceReportsDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.p2ptrace")
	writeRing(t, path, 4, 200, -1)
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := r.Rank(2)
	var ev trace.Event
	for blocks.Next(&ev) {
	}
	r.Close()
	if blocks.Blocks() < 3 {
		t.Fatalf("rank 2 has %d blocks: too few", blocks.Blocks())
	}
	if err := damageBlock(path, 2, 1); err != nil {
		t.Fatal(err)
	}
	tr, err := replay.OpenTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	src, err := tr.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replay.Replay(src, tr.Config()); !errors.Is(err, trace.ErrDamaged) {
		t.Fatalf("replay of a damaged trace: %v, want ErrDamaged", err)
	}
}

// damageBlock flips a byte of block index of rank in the trace at path.
func damageBlock(path string, rank uint32, index uint64) error {
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("ranks")).Bucket(binary.BigEndian.AppendUint32(nil, rank))
		k := binary.BigEndian.AppendUint64(nil, index)
		v := append([]byte(nil), b.Get(k)...)
		v[len(v)/2] ^= 0x40
		return b.Put(k, v)
	})
}

// writeEvents writes evs to a trace file at path, as a recorder would, in
// blocks of 512 bytes.
func writeEvents(t *testing.T, path string, evs replay.Events) {
	t.Helper()
	writeEventsWith(t, path, evs, trace.WriterOptions{NoSync: true, BlockSize: 512})
}

// writeEventsWith is writeEvents with the writer's options opts.
func writeEventsWith(t *testing.T, path string, evs replay.Events, opts trace.WriterOptions) {
	t.Helper()
	w, err := trace.Create(path, trace.Header{WorldSize: len(evs)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for r := range evs {
		for i := range evs[r] {
			w.Append(&evs[r][i])
		}
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
}

// outcomeText is what a test compares of two replays' outcomes: the
// events read, the findings as reported, races, corruptions and cuts.
func outcomeText(out *replay.Outcome) string {
	s := fmt.Sprintf("events %d stuck %v cut %v\n", out.Events, out.Stuck, out.Cut)
	for _, f := range replay.Explain(out, siteName, "", false, "") {
		s += f.Text(1) + "\n"
	}
	for _, r := range out.Races {
		s += fmt.Sprintf("race %d:%d recorded %d:%d replayed %d:%d\n", r.Recv.Rank, r.Recv.Seq, r.RecordedRank, r.RecordedSeq, r.ReplayRank, r.ReplaySeq)
	}
	for _, c := range out.Corrupted {
		s += fmt.Sprintf("corrupted %d:%d -> %d:%d\n", c.Send.Rank, c.Send.Seq, c.Recv.Rank, c.Recv.Seq)
	}
	return s
}

// fileOutcomes replays tr under cfg from both of its sources (decoders
// ahead, and direct) and returns each outcome's text (outcomeText).
func fileOutcomes(t *testing.T, tr *replay.Trace, cfg replay.Config) []string {
	t.Helper()
	var texts []string
	for _, open := range []func() (replay.Source, error){tr.Open, tr.OpenDirect} {
		src, err := open()
		if err != nil {
			t.Fatal(err)
		}
		out, err := replay.Replay(src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, outcomeText(out))
	}
	return texts
}

// A trace file's Source leaves out, for a replay, the Done events no
// replay reads (see doneFilter), counting them: the replay from the file
// is the replay from memory, which reads every event, with the Done events
// a replay does read: a Waitany's and a Test's answers, AnySource
// receives' matches read ahead, sends' under mutate, more than 255 Done
// events in a row, Done events at a rank's end.
func TestFileReplayReadsTheDoneEventsItNeeds(t *testing.T) {
	t.Parallel()
	many := func(n int) replay.Events {
		var send, recv []trace.Event
		var reqs []uint64
		for i := range n {
			reqs = append(reqs, uint64(i+1))
			send = append(send, trace.Event{Op: trace.OpIsend, Peer: 1, Count: 4, Bytes: 4, Req: uint64(i + 1), HashPost: uint64(i + 1)})
			recv = append(recv, trace.Event{Op: trace.OpIrecv, Peer: 0, Count: 4, Bytes: 4, Req: uint64(i + 1)})
		}
		send = append(send, trace.Event{Op: trace.OpWaitall, Reqs: reqs})
		recv = append(recv, trace.Event{Op: trace.OpWaitall, Reqs: reqs})
		ev := mpiTrace(send, recv)
		for r := range ev {
			var dones []trace.Event
			for i := range n {
				d := trace.Event{Seq: uint64(i), Op: ev[r][i].Op, MatchRank: int32(1 - r), MatchSeq: uint64(i)}
				if r == 0 {
					d.HashPost, d.HashDone = uint64(i+1), uint64(i+1+i%2) // every other send mutated
				}
				dones = append(dones, d)
			}
			dones = append(dones, trace.Event{Seq: uint64(n), Op: trace.OpWaitall, MatchRank: trace.NoRank})
			ev[r] = doneAfter(ev[r], uint64(n), dones...)
			ev[r] = doneAfter(ev[r], uint64(n+1), trace.Event{Seq: uint64(n + 1), Op: trace.OpFinalize, MatchRank: trace.NoRank})
		}
		return ev
	}
	// A Free the recorder saw of an active receive: a finding only its Done
	// event tells (the replay's receive completed long before). (An active
	// send's would be legitimate, MPI-3.1 sec. 3.7.3: no finding to lose.)
	free := mpiTrace(
		[]trace.Event{
			{Op: trace.OpIrecv, Peer: 1, Count: 4, Bytes: 4, Req: 1},
			{Op: trace.OpCompute, Duration: int64(time.Millisecond)},
			{Op: trace.OpFree, Reqs: []uint64{1}},
		},
		[]trace.Event{{Op: trace.OpSend, Peer: 0, Count: 4, Bytes: 4}},
	)
	free[0] = doneAfter(free[0], 2, trace.Event{Seq: 2, Op: trace.OpFree, Flag: true, MatchRank: trace.NoRank})
	test := mpiTrace(
		[]trace.Event{
			{Op: trace.OpIrecv, Peer: 1, Count: 4, Bytes: 4, Req: 1},
			{Op: trace.OpTest, Reqs: []uint64{1}},
			{Op: trace.OpTest, Reqs: []uint64{1}},
		},
		[]trace.Event{
			{Op: trace.OpCompute, Duration: int64(time.Millisecond)},
			{Op: trace.OpSend, Peer: 0, Count: 4, Bytes: 4},
		},
	)
	test[0] = doneAfter(test[0], 1, trace.Event{Seq: 1, Op: trace.OpTest, MatchRank: trace.NoRank})
	test[0] = doneAfter(test[0], 2,
		trace.Event{Seq: 0, Op: trace.OpIrecv, MatchRank: 1, MatchSeq: 1},
		trace.Event{Seq: 2, Op: trace.OpTest, Flag: true, MatchRank: trace.NoRank})
	dir := t.TempDir()
	for name, evs := range map[string]replay.Events{
		"ring": writeRing(t, filepath.Join(dir, "ring"), 8, 30, -1),
		// Batches of 81 events: a rank's 91 kept events cross one's end.
		"wide":    writeRing(t, filepath.Join(dir, "wide"), 1500, 30, -1),
		"many":    many(600),
		"waitany": waitanyRaceTrace(),
		"index":   waitanyIndexTrace(), // the Waitany took the request of the later send when recorded
		"free":    free,
		"test":    test,
	} {
		path := filepath.Join(dir, name+".p2ptrace")
		if name == "ring" || name == "wide" {
			path = filepath.Join(dir, name) // written
		} else {
			writeEvents(t, path, evs)
		}
		tr, err := replay.OpenTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, cfg := range []replay.Config{{}, {Seed: 1, Faults: mutateOnly{}}, {Seed: 2, EagerLimit: 1}} {
			if name == "wide" && i > 0 {
				break // its batches, once
			}
			fromMemory, err := replay.Replay(evs.Source(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := outcomeText(fromMemory)
			if name == "free" && !strings.Contains(want, "missing-wait") {
				t.Errorf("free under %+v: no missing-wait from memory:\n%s", cfg, want)
			}
			for _, got := range fileOutcomes(t, tr, cfg) {
				if got != want || fromMemory.Events != eventCount(evs) {
					t.Errorf("%s under %+v: from the file\n%s\nfrom memory (%d events)\n%s", name, cfg, got, eventCount(evs), want)
				}
			}
		}
		tr.Close()
	}
}

// A rank's Waitall of many requests is followed in its record by a run of
// Done events longer than a trace Cursor's window: a replay reads past it,
// from the decoders ahead and on its own goroutine (the run made both fail
// with "bytes after the last event of the block" when a skip of Done
// events reached the window's end twice in one read).
func TestReplayReadsALongRunOfDoneEvents(t *testing.T) {
	t.Parallel()
	const ranks = 128 // 254 requests a Waitall: some 2 KiB of Done events
	evs := make(replay.Events, ranks)
	total := 0
	for r := range ranks {
		var seq, vt uint64
		add := func(e trace.Event) {
			e.Rank = int32(r)
			evs[r] = append(evs[r], e)
			total++
		}
		var reqs []uint64
		for k := 1; k < ranks; k++ {
			reqs = append(reqs, seq+1)
			add(trace.Event{Kind: trace.KindPost, Seq: seq, Op: trace.OpIsend, Peer: int32((r + k) % ranks), Dtype: trace.Uint8, Count: 8, Bytes: 8, Req: seq + 1})
			seq++
		}
		for k := 1; k < ranks; k++ {
			reqs = append(reqs, seq+1)
			add(trace.Event{Kind: trace.KindPost, Seq: seq, Op: trace.OpIrecv, Peer: int32((r - k + ranks) % ranks), Dtype: trace.Uint8, Count: 8, Bytes: 8, Req: seq + 1})
			seq++
		}
		w := seq
		add(trace.Event{Kind: trace.KindPost, Seq: w, Op: trace.OpWaitall, Reqs: reqs})
		seq++
		for j := range w {
			k := j * 5 % w // completions in another order than the posts
			vt += 100 + k%7
			op := trace.OpIsend
			if k >= ranks-1 {
				op = trace.OpIrecv
			}
			add(trace.Event{Kind: trace.KindDone, Seq: k, Op: op, MatchRank: trace.NoRank, DoneVT: int64(vt)})
		}
		add(trace.Event{Kind: trace.KindDone, Seq: w, Op: trace.OpWaitall, MatchRank: trace.NoRank, DoneVT: int64(vt)})
		add(trace.Event{Kind: trace.KindPost, Seq: seq, Op: trace.OpFinalize})
	}
	path := filepath.Join(t.TempDir(), "alltoall.p2ptrace")
	writeEventsWith(t, path, evs, trace.WriterOptions{NoSync: true}) // full blocks: the run is in one, past its window
	tr, err := replay.OpenTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, c := range []struct {
		name string
		open func() (replay.Source, error)
	}{{"ahead", tr.Open}, {"direct", tr.OpenDirect}} {
		name := c.name
		src, err := c.open()
		if err != nil {
			t.Fatal(err)
		}
		out, err := replay.Replay(src, tr.Config())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out.Stuck || len(out.Problems) > 0 || out.Events != int64(total) {
			t.Errorf("%s: %d of %d events, stuck %v, problems %v", name, out.Events, total, out.Stuck, out.Problems)
		}
	}
}
