package trace

import "strings"

// Names is the vocabulary a report uses for a trace's calls: the API the
// recorded program called. A torch.distributed program's report says
// "all_reduce ReduceOp.SUM" and "broadcast src 0" where an MPI program's
// says "Allreduce MPI_SUM" and "Bcast root 0": a finding is read against
// the program's own lines. The nil *Names is the default vocabulary
// (Op.String, ReduceOp.String, "root").
type Names struct {
	api    string
	ops    [opCount]string
	reduce [reduceOpCount]string
	// roots holds the word for a rooted collective's root, by op ("" for
	// "root").
	roots [opCount]string
}

// torchNames is torch.distributed's vocabulary: the function the program
// called for each op the Python recorder writes (how it maps them:
// recorder/python), its ReduceOp members, and src/dst for the root.
var torchNames = func() *Names {
	n := &Names{api: "torch.distributed"}
	for op, name := range map[Op]string{
		OpSend: "send", OpRecv: "recv", OpIsend: "isend", OpIrecv: "irecv",
		// A wait is Work.wait, or under NCCL's rules the wait of a blocking send
		// or recv (replay.NCCLSource): "wait" reads right for both.
		OpWait: "wait", OpWaitall: "wait", OpTest: "Work.is_completed", OpTestall: "Work.is_completed",
		// Under NCCL's rules a send or receive is a stream op (replay.NCCLSource).
		OpStreamSend: "send", OpStreamRecv: "recv",
		OpGroupStart: "batch_isend_irecv (start)", OpGroupEnd: "batch_isend_irecv (end)",
		OpFinalize: "destroy_process_group", OpCompute: "compute",
		OpBarrier: "barrier", OpBcast: "broadcast", OpReduce: "reduce", OpAllreduce: "all_reduce",
		OpGather: "gather", OpScatter: "scatter", OpAllgather: "all_gather",
		OpAlltoall: "all_to_all_single", OpAlltoallv: "all_to_all",
		OpReduceScatter: "reduce_scatter", OpReduceScatterBlock: "reduce_scatter_tensor",
	} {
		n.ops[op] = name
	}
	// async_op=True: the nonblocking form of each.
	for op := OpIbarrier; op <= OpIexscan; op++ {
		if b := n.ops[op.Blocking()]; b != "" {
			n.ops[op] = b + "(async_op=True)"
		}
	}
	for r, name := range map[ReduceOp]string{
		ReduceMax: "MAX", ReduceMin: "MIN", ReduceSum: "SUM", ReduceProd: "PRODUCT",
		ReduceBand: "BAND", ReduceBor: "BOR", ReduceBxor: "BXOR",
	} {
		n.reduce[r] = "ReduceOp." + name
	}
	n.reduce[ReduceUser] = "a ReduceOp not compared (AVG, PREMUL_SUM)"
	for _, op := range []Op{OpBcast, OpScatter, OpIbcast, OpIscatter} {
		n.roots[op] = "src"
	}
	for _, op := range []Op{OpReduce, OpGather, OpIreduce, OpIgather} {
		n.roots[op] = "dst"
	}
	return n
}()

// NamesOf is the vocabulary of a trace by its header: torch.distributed's
// for a trace the Python recorder wrote from torch (Backend
// "torch.distributed ..."), nil (the default) for any other.
func NamesOf(h *Header) *Names {
	if strings.HasPrefix(h.Backend, "torch.distributed") {
		return torchNames
	}
	return nil
}

// TorchNames is torch.distributed's vocabulary (see NamesOf).
func TorchNames() *Names { return torchNames }

// API names the API of the vocabulary ("torch.distributed"), "" for the
// default.
func (n *Names) API() string {
	if n == nil {
		return ""
	}
	return n.api
}

// Op names op as the API does ("all_reduce"); Op.String where the
// vocabulary has no name of its own.
func (n *Names) Op(op Op) string {
	if n != nil && int(op) < len(n.ops) && n.ops[op] != "" {
		return n.ops[op]
	}
	return op.String()
}

// Reduce names a reduction op ("ReduceOp.SUM"); ReduceOp.String where the
// vocabulary has no name of its own.
func (n *Names) Reduce(r ReduceOp) string {
	if n != nil && int(r) < len(n.reduce) && n.reduce[r] != "" {
		return n.reduce[r]
	}
	return r.String()
}

// Root is the word for the root of a rooted collective op ("root"; torch's
// "src" of a broadcast or scatter, "dst" of a reduce or gather).
func (n *Names) Root(op Op) string {
	if n != nil && int(op) < len(n.roots) && n.roots[op] != "" {
		return n.roots[op]
	}
	return "root"
}
