package sim

import (
	"unsafe"

	"github.com/p2ptrace/p2ptrace/internal/cacheline"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Look-ahead of posts. A rank of a 1024-rank all-to-all posts a thousand
// sends to a thousand ranks, and a thousand receives from them, before it
// waits: each post looks up a matching index that no recent post touched
// (the receiver's posted queue, or the rank's own unexpected one), then the
// node the key's FIFO starts at, then the op that node holds. The three
// loads depend on each other, and each misses the caches: on a 2-core VM a
// miss in a gigabyte costs some 300 ns, three a post. A driver that knows
// its rank's next calls (a replay reads them in runs) tells the engine of
// each a few calls before it makes it (WillPost); the engine starts the
// first load at once, and each later one as the earlier's line has come,
// a call or two later, with prefetches that hold up nothing. So the misses
// of several posts are in flight at once, and a post finds its lines in the
// cache.
//
// It only loads: what the engine does, and so every result, is the same
// with or without it (TestWillPostChangesNothing). A forecast that proves
// wrong (the rank blocked first, or its queues changed meanwhile) costs a
// few loads and nothing else.
type postAhead struct {
	ring [postAheadLen]upcoming
	n    uint32 // forecasts so far: the next goes to ring[n%postAheadLen]
}

// upcoming is one forecast post: the index it will look its peer up in
// (take), the index it files itself in if none is there (file), its key,
// and the node found for it (0: none yet, or none).
type upcoming struct {
	take, file *matchIndex
	key        envKey
	node       int32
}

const (
	postAheadLen = 8 // a power of two, above stageOp
	// A forecast's key slot is loaded when it comes, its node stageNode
	// forecasts later, the node's op stageOp forecasts later.
	stageNode = 2
	stageOp   = 4
	// PostLead is how many calls ahead a driver should forecast a post:
	// its last load (the op) then has two calls to arrive.
	PostLead = stageOp + 2
)

// WantsForecasts reports whether forecasts (WillPost) may help now: some
// rank's matching queue is indexed (long: many messages in flight to it),
// and the engine has made more ops than a 4 MiB cache holds. Else what a
// post touches is in the cache (a ring's short queues, a 64-rank
// all-to-all's 8 K ops), and a forecast would only cost its instructions
// (that all-to-all took 14% longer with them).
func (e *Engine) WantsForecasts() bool { return e.nIndexed > 0 && e.opsMade > forecastOps }

// forecastOps is the most ops a 4 MiB cache holds.
const forecastOps = 4 << 20 / int(unsafe.Sizeof(Op{}))

// WillPost forecasts that rank r will soon post an op of this kind with
// this envelope (peer: the destination of a send, the source of a
// receive), and advances the loads of the forecasts before it (see
// postAhead). Only point-to-point sends and receives are forecast (a
// stream op, a collective or a wait only advances the others). It changes
// nothing the engine does.
func (e *Engine) WillPost(r int, kind trace.Op, peer, tag, comm int) {
	p := &e.posts
	u := &p.ring[p.n&(postAheadLen-1)]
	*u = upcoming{}
	send := kind.IsSend() && kind != trace.OpStreamSend
	switch {
	case send && peer >= 0 && peer < len(e.ranks):
		dst := &e.ranks[peer]
		u.take, u.file, u.key = dst.posted.ix, dst.unexpected.ix, envKey{int32(r), int32(tag), int32(comm)}
	case kind.IsRecv() && kind != trace.OpStreamRecv && r >= 0 && r < len(e.ranks):
		rk := &e.ranks[r]
		u.file, u.key = rk.posted.ix, envKey{int32(peer), int32(tag), int32(comm)}
		if peer >= 0 && tag >= 0 { // (a wildcard walks the queue: nothing to forecast)
			u.take = rk.unexpected.ix
		}
	}
	u.take.prefetchHome(u.key)
	u.file.prefetchHome(u.key)
	if b := &p.ring[(p.n-stageNode)&(postAheadLen-1)]; b.take != nil {
		b.node = b.take.headOf(b.key)
		if b.node != 0 {
			cacheline.Prefetch(unsafe.Pointer(&b.take.nodes[b.node]))
		}
	}
	if c := &p.ring[(p.n-stageOp)&(postAheadLen-1)]; c.node != 0 {
		if int(c.node) < len(c.take.nodes) {
			if op := c.take.nodes[c.node].op; op != nil {
				// Lines 0 and 1: what a match reads and writes (see Op).
				cacheline.Prefetch(unsafe.Pointer(op))
				cacheline.Prefetch(unsafe.Add(unsafe.Pointer(op), 64))
			}
		}
		c.node = 0
	}
	p.n++
}

// prefetchHome starts loading where k would be found: its source's slot
// in bySrc, and its home slot in keys while that holds keys (ix may be
// nil: a queue not indexed).
func (ix *matchIndex) prefetchHome(k envKey) {
	if ix == nil {
		return
	}
	if s := ix.dense(k); s != nil {
		cacheline.Prefetch(unsafe.Pointer(s))
		if ix.keys.n == 0 {
			return
		}
	}
	if len(ix.keys.slots) > 0 {
		cacheline.Prefetch(unsafe.Pointer(&ix.keys.slots[ix.keys.home(k)]))
	}
}

// headOf returns the first node of key k, or 0: head without the FIFO.
func (ix *matchIndex) headOf(k envKey) int32 {
	if f := ix.lookup(k); f != nil && int(f.head) < len(ix.nodes) {
		return f.head
	}
	return 0
}
