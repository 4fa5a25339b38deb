package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Rules say which runtime's semantics a replay applies to a trace's
// point-to-point ops.
type Rules string

const (
	// RulesRecorded replays the ops as recorded: MPI semantics with the
	// recorded eager limit (for a torch.distributed trace recorded on gloo:
	// every send waits for its receive, at any size, as gloo's do).
	RulesRecorded Rules = "recorded"
	// RulesNCCL replays point-to-point ops as NCCL runs them (see
	// NCCLSource): the default for torch.distributed traces.
	RulesNCCL Rules = "nccl"
)

// ErrRules is wrapped by the error of an unknown --rules value.
var ErrRules = errors.New("unknown rules")

// ParseRules reads a --rules value: nccl, or gloo / mpi (the ops as
// recorded).
func ParseRules(s string) (Rules, error) {
	switch s {
	case "nccl":
		return RulesNCCL, nil
	case "gloo", "mpi", "recorded":
		return RulesRecorded, nil
	}
	return "", fmt.Errorf("%w %q: want nccl, gloo or mpi", ErrRules, s)
}

// DefaultRules are the rules a trace is checked under unless told: NCCL's
// for torch.distributed programs (they run on NCCL on the GPU cluster,
// whatever backend recorded them), the recorded ones for the rest.
func DefaultRules(h trace.Header) Rules {
	if torchTrace(h) {
		return RulesNCCL
	}
	return RulesRecorded
}

// torchTrace reports whether h is a torch.distributed program's trace.
func torchTrace(h trace.Header) bool { return strings.HasPrefix(h.Backend, "torch.distributed") }

// ncclReqBase starts the request ids NCCLSource gives the blocking sends
// and receives it turns into stream ops (a recorded rank's own ids are
// small: 1, 2, ...).
const ncclReqBase = 1 << 48

// NCCLSource replays src's point-to-point ops under NCCL's rules, the way
// torch.distributed's NCCL backend issues them: each pair of ranks has a
// communicator and a stream of its own (stream 1+peer on each rank), on
// which a send or receive holds the stream until the peer's matching op,
// and later ops to the same peer queue behind it; ops of one
// batch_isend_irecv (GroupStart..GroupEnd) are enqueued together and
// progress together; per pair the i-th send matches the i-th receive
// (tags are not matched, NCCL has none); counts and dtypes must agree.
//
// isend/irecv become stream ops whose request Work.wait waits for; a
// blocking send or recv becomes a stream op and a wait for it, at the same
// site (the program uses the tensor next: on the GPU, the default stream
// waits for it; a CPU-side use, NCCL_BLOCKING_WAIT or the next collective
// blocks the host). A request never waited is still a missing wait.
// Barriers and collectives stay group synchronizations.
func NCCLSource(src Source) Source {
	return &ncclSource{src: src, ranks: make([]ncclRank, src.Ranks())}
}

type ncclRank struct {
	pending []trace.Event
	seq     uint64            // next output seq
	seqOf   map[uint64]uint64 // recorded post seq -> output seq (of posts whose Done is kept)
	nextReq uint64
}

type ncclSource struct {
	src   Source
	ranks []ncclRank
	in    trace.Event
}

func (s *ncclSource) Ranks() int { return s.src.Ranks() }
func (s *ncclSource) Err() error { return s.src.Err() }

func (s *ncclSource) Next(r int, ev *trace.Event) bool {
	rk := &s.ranks[r]
	for len(rk.pending) == 0 {
		if !s.src.Next(r, &s.in) {
			return false
		}
		s.convert(rk, &s.in)
	}
	*ev = rk.pending[0]
	rk.pending = rk.pending[1:]
	return true
}

func (s *ncclSource) convert(rk *ncclRank, in *trace.Event) {
	if rk.seqOf == nil {
		rk.seqOf = map[uint64]uint64{}
	}
	ev := *in
	ev.Reqs = slices.Clone(in.Reqs)
	if ev.Kind == trace.KindDone {
		seq, ok := rk.seqOf[ev.Seq]
		if !ok {
			return
		}
		delete(rk.seqOf, ev.Seq)
		ev.Seq = seq
		ev.Op = streamOp(ev.Op)
		ev.MatchRank, ev.MatchSeq = trace.NoRank, 0 // recorded on gloo: no NCCL match to compare with
		rk.pending = append(rk.pending, ev)
		return
	}
	rk.seqOf[ev.Seq] = rk.seq
	ev.Seq = rk.seq
	rk.seq++
	blocking := false
	switch ev.Op {
	case trace.OpSend, trace.OpSsend, trace.OpBsend, trace.OpRsend, trace.OpRecv:
		blocking = true
		rk.nextReq++
		ev.Req = ncclReqBase + rk.nextReq
		fallthrough
	case trace.OpIsend, trace.OpIssend, trace.OpIbsend, trace.OpIrsend, trace.OpIrecv:
		ev.Op = streamOp(ev.Op)
		ev.Stream = 1 + ev.Peer
		ev.Tag = 0
	}
	rk.pending = append(rk.pending, ev)
	if blocking {
		w := trace.Event{Kind: trace.KindPost, Rank: ev.Rank, Seq: rk.seq, Op: trace.OpWait, Reqs: []uint64{ev.Req},
			Site: ev.Site, PostWall: ev.PostWall, PostVT: ev.PostVT, MatchRank: trace.NoRank}
		rk.seq++
		rk.pending = append(rk.pending, w)
	}
}

// streamOp is the NCCL stream op of a recorded send or receive.
func streamOp(op trace.Op) trace.Op {
	switch {
	case op.IsSend():
		return trace.OpStreamSend
	case op.IsRecv():
		return trace.OpStreamRecv
	}
	return op
}
