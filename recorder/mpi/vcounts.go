package mpi

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// vMember is one member's call of a v collective: its world rank and the
// index of its post in that rank's records.
type vMember struct {
	rank, i int
}

// vCall is the k-th collective call on a communicator, as every member
// made it, by rank in the communicator.
type vCall struct {
	ranks []*rankData
	comm  int32
	k     int
	kind  trace.Op // the blocking form
	byTag []vMember
	n     int
}

func (c *vCall) rec(m vMember) *record {
	rd := c.ranks[m.rank]
	return &rd.seg.recs[rd.posts[m.i]]
}

// counts is m's vcounts, nil when it recorded none or a negative count
// (an MPI error, MPI_ERR_COUNT, reports that).
func (c *vCall) counts(m vMember) []int64 {
	vc := c.ranks[m.rank].vcounts[m.i]
	if slices.ContainsFunc(vc, func(x int64) bool { return x < 0 }) {
		return nil
	}
	return vc
}

// vcountFindings reports the v collectives whose members' counts disagree:
// the type signature of what one member sends to another must equal what
// that one receives from it (MPI-3.1 sec. 5.5, Gatherv: "The type signature
// implied by sendcount, sendtype on process i must be equal to the type
// signature implied by recvcounts[i], recvtype at the root"; sec. 5.6
// Scatterv, 5.7 Allgatherv and 5.8 Alltoallv likewise; sec. 5.10.1,
// Reduce_scatter: the recvcounts are "identical on all processes"). The
// engine compares the other collectives' calls (one size for every member);
// a v collective's sizes differ by member, so the rule needs the count
// vectors, which only the shim's records hold (vcounts). Sizes are compared,
// in bytes. A Gatherv whose root expects 12 bytes from a rank that sends 8
// gets no error from Open MPI and leaves the root's buffer short; the
// reverse is an MPI_ERR_TRUNCATE, which this finding explains
// (verdict.FoldEffects).
//
// The k-th collective calls of a communicator are compared when every
// member made one and all are the same v collective (the engine reports any
// other disagreement): one finding per call, at its first disagreement, a
// collective-mismatch naming both calls.
func vcountFindings(ranks []*rankData, siteText siteTextFunc) []verdict.Finding {
	type callKey struct {
		comm int32
		k    int
	}
	calls := map[callKey][]vMember{}
	for r, rd := range ranks {
		if rd == nil || !hasVColl(rd) {
			continue
		}
		entered := map[int32]int{}
		for i, ri := range rd.posts {
			if rd.skip[i] || !rd.op[i].IsCollective() {
				continue
			}
			p := &rd.seg.recs[ri]
			k := entered[p.Comm]
			entered[p.Comm]++
			if vKind(rd.op[i]) {
				key := callKey{p.Comm, k}
				calls[key] = append(calls[key], vMember{r, i})
			}
		}
	}
	keys := make([]callKey, 0, len(calls))
	for k := range calls {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b callKey) int {
		return cmp.Or(cmp.Compare(a.comm, b.comm), cmp.Compare(a.k, b.k))
	})
	var fs []verdict.Finding
	for _, key := range keys {
		c := newVCall(ranks, key.comm, key.k, calls[key])
		if c == nil {
			continue
		}
		if f, ok := c.disagreement(siteText); ok {
			fs = append(fs, f)
		}
	}
	return fs
}

// hasVColl reports whether rd made a v collective (its counts may all be
// another rank's: a Gatherv's non-roots record none).
func hasVColl(rd *rankData) bool {
	for i := range rd.op {
		if !rd.skip[i] && vKind(rd.op[i]) {
			return true
		}
	}
	return false
}

// newVCall arranges the members' calls by rank in the communicator (their
// records' tag); nil unless every member of the communicator made the call
// (the job may have ended first) and all made the same collective.
func newVCall(ranks []*rankData, comm int32, k int, ms []vMember) *vCall {
	c := &vCall{ranks: ranks, comm: comm, k: k}
	first := ms[0]
	c.kind = ranks[first.rank].op[first.i].Blocking()
	c.n = int(c.rec(first).Count) // the communicator's size
	if c.n <= 0 || len(ms) != c.n {
		return nil
	}
	c.byTag = make([]vMember, c.n)
	seen := make([]bool, c.n)
	for _, m := range ms {
		p := c.rec(m)
		if ranks[m.rank].op[m.i].Blocking() != c.kind || p.Tag < 0 || int(p.Tag) >= c.n || seen[p.Tag] {
			return nil
		}
		c.byTag[p.Tag], seen[p.Tag] = m, true
	}
	return c
}

// disagreement is the finding of the call's first disagreement, if any.
func (c *vCall) disagreement(siteText siteTextFunc) (verdict.Finding, bool) {
	switch c.kind {
	case trace.OpGatherv, trace.OpScatterv:
		for _, root := range c.byTag {
			if int32(root.rank) != c.rec(root).Peer {
				continue
			}
			vc := c.counts(root)
			if len(vc) != c.n {
				break
			}
			for j, m := range c.byTag {
				if own := c.rec(m).Bytes; own >= 0 && vc[j] != own {
					if c.kind == trace.OpGatherv {
						return c.finding(siteText, root, m, fmt.Sprintf("the root, rank %d, expects %d bytes from rank %d, which sends %d",
							root.rank, vc[j], m.rank, own), sizes+" (MPI-3.1 sec. 5.5)")
					}
					return c.finding(siteText, root, m, fmt.Sprintf("the root, rank %d, sends %d bytes to rank %d, which expects %d",
						root.rank, vc[j], m.rank, own), sizes+" (MPI-3.1 sec. 5.6)")
				}
			}
		}
	case trace.OpAllgatherv:
		for _, x := range c.byTag {
			vc := c.counts(x)
			if len(vc) != c.n {
				continue
			}
			for j, m := range c.byTag {
				if own := c.rec(m).Bytes; own >= 0 && vc[j] != own {
					return c.finding(siteText, x, m, fmt.Sprintf("rank %d expects %d bytes from rank %d, which sends %d",
						x.rank, vc[j], m.rank, own), sizes+" (MPI-3.1 sec. 5.7)")
				}
				if vc[j] > 0 && m != x {
					if f, ok := c.typeDisagreement(siteText, m, x, "5.7"); ok {
						return f, true
					}
				}
			}
		}
	case trace.OpAlltoallv:
		for xi, x := range c.byTag {
			xv := c.counts(x)
			if len(xv) != 2*c.n {
				continue
			}
			for j, y := range c.byTag {
				yv := c.counts(y)
				if len(yv) == 2*c.n && xv[j] != yv[c.n+xi] {
					return c.finding(siteText, x, y, fmt.Sprintf("rank %d sends %d bytes to rank %d, which expects %d",
						x.rank, xv[j], y.rank, yv[c.n+xi]), sizes+" (MPI-3.1 sec. 5.8)")
				}
				if len(yv) == 2*c.n && xv[j] > 0 && x != y {
					if f, ok := c.typeDisagreement(siteText, x, y, "5.8"); ok {
						return f, true
					}
				}
			}
		}
	case trace.OpAllgather, trace.OpAlltoall:
		// Each member's vcounts are its own send block (none with
		// MPI_IN_PLACE); its record's size is what it receives from each
		// member. A member whose receive block differs from another's is
		// the engine's finding (the calls' sizes differ): not here.
		recv := int64(-1)
		for _, x := range c.byTag {
			if b := c.rec(x).Bytes; b >= 0 {
				if recv >= 0 && b != recv {
					return verdict.Finding{}, false
				}
				recv = b
			}
		}
		sec := "5.7"
		if c.kind == trace.OpAlltoall {
			sec = "5.8"
		}
		for _, m := range c.byTag {
			vc := c.counts(m)
			if len(vc) != 1 || recv < 0 || vc[0] == recv {
				continue
			}
			x := c.byTag[0]
			if x == m && c.n > 1 {
				x = c.byTag[1]
			}
			return c.finding(siteText, x, m, fmt.Sprintf("rank %d sends %d bytes to each member, which each expect %d from it",
				m.rank, vc[0], recv), sizes+" (MPI-3.1 sec. "+sec+")")
		}
	case trace.OpReduceScatter:
		var base []int64
		var bm vMember
		for _, x := range c.byTag {
			vc := c.counts(x)
			if len(vc) != c.n {
				continue
			}
			if base == nil {
				base, bm = vc, x
				continue
			}
			for j := range vc {
				if vc[j] != base[j] {
					return c.finding(siteText, bm, x, fmt.Sprintf("rank %d's recvcounts give rank %d %d bytes, rank %d's give it %d",
						bm.rank, c.byTag[j].rank, base[j], x.rank, vc[j]), "the recvcounts must be identical on every member (MPI-3.1 sec. 5.10.1)")
				}
			}
		}
	}
	return verdict.Finding{}, false
}

// typeDisagreement is the finding of a v collective whose member from
// sends elements of one basic type to member to, which receives another:
// the type signatures differ though their sizes agree (MPI-3.1 sec. 5.7,
// 5.8: the type signature of what one sends must equal what the other
// receives). The types compared are the C types the shim noted for the
// send buffer (from's CType) and the receive buffer (to's CType2): known
// only where the records have them, MPI_BYTE and MPI_PACKED none. The
// caller saw the sizes agree and above zero.
func (c *vCall) typeDisagreement(siteText siteTextFunc, from, to vMember, sec string) (verdict.Finding, bool) {
	s, r := c.rec(from).CType, c.rec(to).CType2
	if s == 0 || r == 0 || s.class() == ctAny || r.class() == ctAny || s == r {
		return verdict.Finding{}, false
	}
	return c.finding(siteText, from, to, fmt.Sprintf("rank %d sends %s to rank %d, which receives %s from it", from.rank, s, to.rank, r),
		"the type signatures differ (MPI-3.1 sec. "+sec+")")
}

// sizes says why two sides that differ in size disagree.
const sizes = "the type signatures differ in size"

// finding is the collective-mismatch of the call between members a and b:
// what they disagree on, and the rule.
func (c *vCall) finding(siteText siteTextFunc, a, b vMember, what, why string) (verdict.Finding, bool) {
	if b.rank < a.rank {
		a, b = b, a
	}
	ra, rb := c.rec(a), c.rec(b)
	sa := siteText(c.ranks[a.rank], ra.Module, ra.PC, ra.Site)
	sb := siteText(c.ranks[b.rank], rb.Module, rb.PC, rb.Site)
	name := callName(uint32(ra.Call))
	f := verdict.New(verdict.CollectiveMismatch, []int{a.rank, b.rank},
		fmt.Sprintf("collective call %d on %s (%s): %s: %s", c.k+1, commText(c.comm), name, what, why),
		callRef(a.rank, c.ranks[a.rank], ra, sa), callRef(b.rank, c.ranks[b.rank], rb, sb))
	f.Collective = &verdict.CollectiveCall{Comm: int(c.comm), Call: uint64(c.k + 1)}
	return f, true
}

// vKind reports whether a collective op has per-member counts (vcounts),
// or, an Allgather's or Alltoall's, the size of its own send block.
func vKind(op trace.Op) bool {
	switch op.Blocking() {
	case trace.OpGatherv, trace.OpScatterv, trace.OpAllgatherv, trace.OpAlltoallv, trace.OpReduceScatter,
		trace.OpAllgather, trace.OpAlltoall: // (their own send block: see disagreement)
		return true
	}
	return false
}

// commText names a communicator as the engine's collective findings do.
func commText(comm int32) string {
	if comm == 0 {
		return "the world"
	}
	return fmt.Sprintf("comm %d", comm)
}
