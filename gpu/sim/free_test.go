package sim_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// freeReq frees *got's request (MPI_Request_free).
func freeReq(got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		call := e.NewOp(r, trace.OpFree)
		call.SetReqs([]*sim.Op{*got})
		e.Free(call, *got)
		return true
	}
}

// dataMsg posts a message op of kind with an 8-byte buffer; a nonblocking
// one gets a request (*got), a blocking one blocks until done.
func dataMsg(kind trace.Op, peer, tag int, data []byte, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, kind)
		op.Peer, op.Tag, op.Bytes, op.Count, op.Dtype = int32(peer), int32(tag), 8, 8, trace.Uint8
		op.SetData(data)
		*got = op
		nonblocking := kind != trace.OpSend && kind != trace.OpRecv
		if nonblocking {
			e.NewRequest(op)
		}
		if kind.IsSend() {
			e.PostSend(op)
		} else {
			e.PostRecv(op)
		}
		return nonblocking || e.BlockOn(op)
	}
}

// TestRequestFreeActiveSendIsClean: MPI-3.1 sec. 3.7.3 lets a program free
// an active send's request and learn of its completion otherwise (here a
// reply): rank 0 frees its Isend (rendezvous, so still active) and waits for
// rank 1's reply; rank 1 receives late. No finding, the message is still
// delivered and the send completes, unwaited. (The old engine reported the
// Free as a missing Wait.)
func TestRequestFreeActiveSendIsClean(t *testing.T) {
	for _, kind := range []trace.Op{trace.OpIsend, trace.OpIssend} {
		e := sim.New(sim.Config{Ranks: 2, EagerLimit: -1})
		sent := []byte{1, 2, 3, 4, 5, 6, 7, 8}
		got := make([]byte, 8)
		var snd, rcv, reply, replied *sim.Op
		runClean(t, e, [][]call{
			{dataMsg(kind, 1, 0, sent, &snd), freeReq(&snd), dataMsg(trace.OpRecv, 1, 1, make([]byte, 8), &replied)},
			{compute(1000), dataMsg(trace.OpRecv, 0, 0, got, &rcv), dataMsg(trace.OpSend, 0, 1, make([]byte, 8), &reply)},
		})
		if !bytes.Equal(got, sent) {
			t.Errorf("%s: rank 1 got %v, want %v", kind, got, sent)
		}
		if !snd.Done() || !snd.Waited() || snd.Matched() != rcv || !rcv.Done() || !replied.Done() {
			t.Errorf("%s: send done %v waited %v matched %v, receive done %v, reply received %v",
				kind, snd.Done(), snd.Waited(), snd.Matched() == rcv, rcv.Done(), replied.Done())
		}
	}
}

// TestRequestFreeActiveRecvIsMissingWait: freeing an active receive's (or
// nonblocking collective's) request leaves the program no way to know when
// its buffer holds the data (the standard's advice): still a missing Wait,
// and the message is still received.
func TestRequestFreeActiveRecvIsMissingWait(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var rv, sd, ic [2]*sim.Op
	got := make([]byte, 8)
	runScript(e, [][]call{
		{dataMsg(trace.OpIrecv, 1, 0, got, &rv[0]), freeReq(&rv[0]), icoll(trace.OpIallreduce, 2, -1, 8, 1, &ic[0]), freeReq(&ic[0])},
		{compute(1000), dataMsg(trace.OpSend, 0, 0, []byte{9, 9, 9, 9, 9, 9, 9, 9}, &sd[0]), icoll(trace.OpIallreduce, 2, -1, 8, 1, &ic[1]), waitReq(&ic[1])},
	})
	ps := e.Problems()
	if e.Stuck() || len(ps) != 2 {
		t.Fatalf("stuck %v, problems %+v, want 2", e.Stuck(), ps)
	}
	for i, want := range []string{
		"rank 0: request of Irecv (peer 1, tag 0) freed while still active",
		"rank 0: request of Iallreduce (8 bytes) freed while still active",
	} {
		if ps[i].Kind != verdict.MissingWait || !strings.HasPrefix(ps[i].Message, want) {
			t.Errorf("problem %d: %s %q, want missing-wait %q", i, ps[i].Kind, ps[i].Message, want)
		}
	}
	if !rv[0].Done() || got[0] != 9 {
		t.Errorf("freed receive done %v, got %v", rv[0].Done(), got)
	}
}

// TestRequestFreeActiveSendUnreceivedIsUnmatched: a freed send nobody
// receives is not lost from the findings: eager (complete) or rendezvous
// (still active when the run ends), it is an unmatched-send. (The old engine
// called the Free a missing Wait; the rendezvous one, once the Free was
// legitimate, went unreported.)
func TestRequestFreeActiveSendUnreceivedIsUnmatched(t *testing.T) {
	for _, eager := range []int64{0, -1} {
		e := sim.New(sim.Config{Ranks: 2, EagerLimit: eager})
		var snd *sim.Op
		runScript(e, [][]call{{dataMsg(trace.OpIsend, 1, 0, make([]byte, 8), &snd), freeReq(&snd)}, {}})
		e.End()
		ps := e.Problems()
		if e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.UnmatchedSend || ps[0].Ops[0] != snd {
			t.Errorf("eager limit %d: stuck %v, problems %+v, want one unmatched-send", eager, e.Stuck(), ps)
		}
	}
}

// TestRequestFreeOfArrivedRecvIsMissingWait: a receive handle is active
// until a Wait or Test completes it (MPI-3.1 sec. 3.7.3), not until its
// message arrives: a receive whose message came before the Free is freed
// active all the same, and reported, so the verdict does not depend on the
// timing of the run (MPI-CorrBench's MissingCall-MPIWait was reported only
// under a delay that made the message late). A receive first named by
// MPI_Cancel may be freed (sec. 3.8.4), whether or not the cancel took it
// back; a receive completed by its Wait has no request left to free.
func TestRequestFreeOfArrivedRecvIsMissingWait(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var early, cancelledEarly, cancelledLate, waited [2]*sim.Op
	var arrived bool
	runScript(e, [][]call{
		{
			compute(1_000_000), // (rank 1's messages are in by then)
			dataMsg(trace.OpIrecv, 1, 0, make([]byte, 8), &early[0]), compute(1_000_000), doneNow(&early[0], &arrived), freeReq(&early[0]),
			dataMsg(trace.OpIrecv, 1, 1, make([]byte, 8), &cancelledEarly[0]), compute(1000), cancelReq(&cancelledEarly[0]), freeReq(&cancelledEarly[0]),
			dataMsg(trace.OpIrecv, 1, 2, make([]byte, 8), &cancelledLate[0]), cancelReq(&cancelledLate[0]), freeReq(&cancelledLate[0]),
			dataMsg(trace.OpIrecv, 1, 3, make([]byte, 8), &waited[0]), waitReq(&waited[0]),
		},
		{
			dataMsg(trace.OpIsend, 0, 0, make([]byte, 8), &early[1]), waitReq(&early[1]),
			dataMsg(trace.OpIsend, 0, 1, make([]byte, 8), &cancelledEarly[1]), waitReq(&cancelledEarly[1]),
			dataMsg(trace.OpIsend, 0, 3, make([]byte, 8), &waited[1]), waitReq(&waited[1]),
		},
	})
	if !arrived {
		t.Fatal("the first receive was not done before its Free: the case does not test arrival")
	}
	ps := e.Problems()
	if len(ps) != 1 || ps[0].Kind != verdict.MissingWait || ps[0].Ops[0] != early[0] ||
		!strings.HasPrefix(ps[0].Message, "rank 0: request of Irecv (peer 1, tag 0) freed while still active") {
		t.Errorf("problems %+v, want one missing-wait, the arrived receive's Free", ps)
	}
}

// doneNow notes whether *op is done when the rank gets to it.
func doneNow(op **sim.Op, done *bool) call {
	return func(e *sim.Engine, r int) bool {
		*done = (*op).Done()
		return true
	}
}
