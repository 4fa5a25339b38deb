package sim_test

import (
	"github.com/p2ptrace/p2ptrace/verdict"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// call is one runtime call of a scripted rank; it returns whether the rank goes on.
type call func(e *sim.Engine, r int) bool

// runScript steps the engine without goroutines: each rank makes its calls in
// order, then finalizes (unless its script ends in a call that never returns).
func runScript(e *sim.Engine, script [][]call) {
	step := make([]int, len(script))
	for {
		r, ok := e.Next()
		if !ok {
			return
		}
		for cont := true; cont; {
			if step[r] == len(script[r]) {
				e.Finalize(e.NewOp(r, trace.OpFinalize))
				step[r]++
				break
			}
			if step[r] > len(script[r]) {
				break
			}
			cont = script[r][step[r]](e, r)
			step[r]++
		}
	}
}

func barrier(comm, count int, site uintptr, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, trace.OpBarrier)
		op.Comm, op.Count, op.Site = int32(comm), int64(count), site
		if got != nil {
			*got = op
		}
		return e.Barrier(op)
	}
}

func compute(d int64) call {
	return func(e *sim.Engine, r int) bool { return e.Compute(e.NewOp(r, trace.OpCompute), d) }
}

func send(peer, tag int) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, trace.OpSend)
		op.Peer, op.Tag, op.Bytes, op.Count, op.Dtype = int32(peer), int32(tag), 8, 8, trace.Uint8
		e.PostSend(op)
		return e.BlockOn(op)
	}
}

func recv(peer, tag int, site uintptr) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, trace.OpRecv)
		op.Peer, op.Tag, op.Bytes, op.Count, op.Dtype, op.Site = int32(peer), int32(tag), 8, 8, trace.Uint8, site
		e.PostRecv(op)
		return e.BlockOn(op)
	}
}

func probe(peer, tag int, site uintptr, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, trace.OpProbe)
		op.Peer, op.Tag, op.Site = int32(peer), int32(tag), site
		*got = op
		return e.Probe(op)
	}
}

func sites(site uintptr) string { return "site" + string(rune('0'+site)) }

func TestBarrierReleasesAllAtLatestArrivalPlusLatency(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 3, Latency: time.Microsecond})
	var ops [3]*sim.Op
	var script [][]call
	for r := range 3 {
		script = append(script, []call{compute(int64(r+1) * 1000), barrier(0, 0, 1, &ops[r])})
	}
	runScript(e, script)
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("stuck %v: %+v", e.Stuck(), e.Problems())
	}
	for r, op := range ops {
		if !op.Done() || op.DoneT != 3000+1000 || e.Clock(r) != 4000 {
			t.Fatalf("rank %d left the barrier at %d (clock %d), want 4000", r, op.DoneT, e.Clock(r))
		}
	}
}

// TestBarrierGenerationsPerComm: the k-th barrier of a comm waits for the
// k-th barrier of Count ranks; a sub-communicator needs only its own ranks.
func TestBarrierGenerationsPerComm(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 3})
	script := [][]call{
		{barrier(7, 2, 1, nil), barrier(7, 2, 1, nil), barrier(0, 0, 2, nil)},
		{barrier(7, 2, 1, nil), barrier(7, 2, 1, nil), barrier(0, 0, 2, nil)},
		{barrier(0, 0, 2, nil)},
	}
	runScript(e, script)
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("stuck %v: %+v", e.Stuck(), e.Problems())
	}
}

// TestBarrierWithFinalizedMemberIsAMissingCollective: ranks 0 and 1 wait
// in a barrier that rank 2 finished without calling. The run is stuck, and
// the finding is the missing call (a collective-mismatch naming all three
// ranks and the collective), with the blocked ranks and what they wait on.
func TestBarrierWithFinalizedMemberIsAMissingCollective(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 3})
	script := [][]call{{barrier(0, 0, 1, nil)}, {barrier(0, 0, 2, nil)}, {}}
	runScript(e, script)
	ps := e.Problems()
	if !e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch {
		t.Fatalf("stuck %v: %+v", e.Stuck(), ps)
	}
	p := ps[0]
	if p.Collective == nil || *p.Collective != (verdict.CollectiveCall{Comm: 0, Call: 1}) {
		t.Errorf("collective %+v, want the world's first", p.Collective)
	}
	if !slices.Equal(p.Ranks, []int{0, 1, 2}) || p.Blocked[0].Call.Kind != trace.OpBarrier ||
		!slices.Equal(p.Blocked[0].WaitsOn, []int{2}) || !slices.Equal(p.Blocked[1].WaitsOn, []int{2}) {
		t.Fatalf("%+v", p)
	}
	f := p.Finding(sites)
	text := f.Text(1)
	for _, want := range []string{"rank 0 blocked in Barrier at site1", "rank 1 blocked in Barrier at site2",
		"collective call 1 on the world: ranks 0, 1 called Barrier; rank 2 finished without calling it"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

// TestBarrierOnCommWaitsForKnownMembers: on a comm other than the world, the
// ranks waited for are those seen using that comm.
func TestBarrierOnCommWaitsForKnownMembers(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 4})
	commRecv := func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, trace.OpIrecv)
		op.Peer, op.Tag, op.Comm = 0, 1, 5
		e.NewRequest(op)
		e.PostRecv(op)
		return true
	}
	free := func(e *sim.Engine, r int) bool { return true }
	script := [][]call{{barrier(5, 3, 1, nil)}, {barrier(5, 3, 1, nil)}, {commRecv, free}, {}}
	runScript(e, script)
	ps := e.Problems()
	var stuck *sim.Problem
	for i := range ps {
		if len(ps[i].Blocked) > 0 {
			stuck = &ps[i]
		}
	}
	// (Rank 2 finished without the barrier: a missing collective.)
	if stuck == nil || stuck.Kind != verdict.CollectiveMismatch || !slices.Equal(stuck.Blocked[0].WaitsOn, []int{2}) {
		t.Fatalf("%+v", ps)
	}
}

func TestBarrierAgainstRecvIsDeadlock(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	script := [][]call{{barrier(0, 2, 1, nil), send(1, 0)}, {recv(0, 0, 2)}}
	runScript(e, script)
	ps := e.Problems()
	if !e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.Deadlock || len(ps[0].Cycle) != 3 {
		t.Fatalf("%+v", ps)
	}
	f := ps[0].Finding(sites)
	text := f.Text(1)
	for _, want := range []string{"rank 0 blocked in Barrier at site1", "rank 1 blocked in Recv from rank 0 tag 0 (8 bytes) at site2"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	// A cycle of a collective and a receive: reordering the point-to-point
	// calls alone is not the fix the deadlock hint names.
	if want := "a collective may block until every member of its communicator has called it: let no member wait, before calling it, in a send or receive whose peer is inside it (complete the exchange first, or make it nonblocking)"; f.Hint != want {
		t.Errorf("hint %q, want %q", f.Hint, want)
	}
}

func TestProbeWaitsForTheMessageWithoutConsumingIt(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2, Latency: time.Microsecond})
	var p *sim.Op
	script := [][]call{{compute(5000), send(1, 3)}, {probe(trace.AnySource, trace.AnyTag, 1, &p), recv(0, 3, 2)}}
	runScript(e, script)
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("stuck %v: %+v", e.Stuck(), e.Problems())
	}
	if !p.Done() || p.DoneT != 5000 || p.Source != 0 || p.StatusTag != 3 || p.StatusCnt != 8 {
		t.Fatalf("probe %+v", p)
	}
}

func TestProbeNeverSatisfiedIsHangWithCandidate(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var p *sim.Op
	script := [][]call{{send(1, 4)}, {probe(0, 3, 2, &p)}}
	runScript(e, script)
	ps := e.Problems()
	if !e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.Hang {
		t.Fatalf("%+v", ps)
	}
	f := ps[0].Finding(sites)
	text := f.Text(1)
	for _, want := range []string{"rank 1 blocked in Probe from rank 0 tag 3 at site2", "rank 1 waits on rank 0, which has finished", "nearest candidate: rank 0 sent tag 4 to rank 1; rank 1 waits for Probe from rank 0 tag 3"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

func TestIprobeDoesNotBlock(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var ip *sim.Op
	iprobe := func(e *sim.Engine, r int) bool {
		ip = e.NewOp(r, trace.OpIprobe)
		ip.Peer, ip.Tag = 0, 0
		e.Iprobe(ip)
		return true
	}
	script := [][]call{{}, {iprobe}}
	runScript(e, script)
	if e.Stuck() || len(e.Problems()) != 0 || !ip.Done() || ip.Flag {
		t.Fatalf("stuck %v, iprobe %+v: %+v", e.Stuck(), ip, e.Problems())
	}
}

// TestProcNullCompletesAtOnce: MPI_PROC_NULL as the peer of a send, a
// receive, a probe and an Iprobe (MPI traces) is legal: each completes at
// once, the receive and probes with source ProcNull, and nothing is found.
func TestProcNullCompletesAtOnce(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var p, ip, rv *sim.Op
	iprobe := func(e *sim.Engine, r int) bool {
		ip = e.NewOp(r, trace.OpIprobe)
		ip.Peer = trace.ProcNull
		e.Iprobe(ip)
		return true
	}
	recvNull := func(e *sim.Engine, r int) bool {
		rv = e.NewOp(r, trace.OpRecv)
		rv.Peer, rv.Bytes, rv.Count, rv.Dtype = trace.ProcNull, 8, 8, trace.Uint8
		e.PostRecv(rv)
		return e.BlockOn(rv)
	}
	script := [][]call{{send(trace.ProcNull, 0), recvNull, probe(trace.ProcNull, 0, 1, &p), iprobe}, {}}
	runScript(e, script)
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("stuck %v: %+v", e.Stuck(), e.Problems())
	}
	for _, op := range []*sim.Op{rv, p, ip} {
		if op == nil || !op.Done() || op.Source != trace.ProcNull {
			t.Errorf("op %+v: want done, source ProcNull", op)
		}
	}
	if !ip.Flag {
		t.Errorf("Iprobe of ProcNull: flag false")
	}
}

// TestCollectivesOnTwoWorldCommsInOppositeOrderIsDeadlock: rank 0 enters a
// barrier of the world, rank 1 one of a dup of the world (same size): each
// waits for the other, which has not used the other's comm yet but is a
// member of it (its size is the world's): a wait-for cycle, a deadlock, not
// a hang that "waits for a message no rank can send" (as before).
func TestCollectivesOnTwoWorldCommsInOppositeOrderIsDeadlock(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	script := [][]call{
		{barrier(0, 2, 1, nil), barrier(9, 2, 2, nil)},
		{barrier(9, 2, 2, nil), barrier(0, 2, 1, nil)},
	}
	runScript(e, script)
	ps := e.Problems()
	if !e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.Deadlock || !slices.Equal(ps[0].Cycle, []int{0, 1, 0}) {
		t.Fatalf("%+v", ps)
	}
	if !slices.Equal(ps[0].Blocked[0].WaitsOn, []int{1}) || !slices.Equal(ps[0].Blocked[1].WaitsOn, []int{0}) {
		t.Fatalf("waits on %v, %v", ps[0].Blocked[0].WaitsOn, ps[0].Blocked[1].WaitsOn)
	}
	// Every rank of the cycle in a collective: the fix is their order.
	if f, want := ps[0].Finding(sites), "call the collectives of each communicator in the same order on every rank: a collective may block until every member of its communicator has called it (MPI-3.1 sec. 5.13)"; f.Hint != want {
		t.Errorf("hint %q, want %q", f.Hint, want)
	}
}

// TestCollectiveOnAKnownCommWaitsForItsMembers: members given in advance
// (Config.Comms, an MPI trace's header) count before they use the comm:
// rank 0 in the world's barrier waits for rank 2, rank 2 in comm 5's for
// rank 0 (a member that has not used comm 5 yet): a deadlock. Without the
// members rank 2 waits on no one: a hang.
func TestCollectiveOnAKnownCommWaitsForItsMembers(t *testing.T) {
	script := func() [][]call {
		return [][]call{
			{barrier(0, 3, 1, nil), barrier(5, 2, 2, nil)},
			{barrier(0, 3, 1, nil)},
			{barrier(5, 2, 2, nil), barrier(0, 3, 1, nil)},
		}
	}
	e := sim.New(sim.Config{Ranks: 3, Comms: []trace.CommGroup{{ID: 5, Ranks: []int{2, 0}}}})
	runScript(e, script())
	ps := e.Problems()
	if len(ps) != 1 || ps[0].Kind != verdict.Deadlock || !slices.Equal(ps[0].Cycle, []int{0, 2, 0}) {
		t.Fatalf("with the members: %+v", ps)
	}
	e = sim.New(sim.Config{Ranks: 3})
	runScript(e, script())
	if ps := e.Problems(); len(ps) != 1 || ps[0].Kind != verdict.Hang {
		t.Fatalf("without the members: %+v", ps)
	}
}
