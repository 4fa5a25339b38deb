// Package sim is the deterministic simulation engine under package gpu and
// the replayer: matching, send modes, requests, streams, groups, the virtual
// clock and one event queue ordered by (virtual time, seeded tie).
//
// It has no goroutines. A driver loops:
//
//	for {
//		r, ok := e.Next() // processes arrivals and completions, picks the rank to run
//		if !ok {
//			break // all done, or e.Stuck()
//		}
//		// make rank r's calls: NewOp, PostSend, PostRecv, Block, Compute, ...
//		// until one returns false (the rank blocked or must yield)
//	}
//
// The code driver (package gpu) runs user goroutines this way; the trace
// driver (package replay) steps cursors over a recorded trace. Both meet the
// same rules, written once here.
//
// A driver that keeps no reference to an op once its call returned may hand
// it back with Release, and NewOp reuses it; the engine keeps whatever it
// may still touch or report (see Release). The trace driver does, so a
// replay allocates almost nothing per event; the code driver does not (user
// code holds its Requests).
//
// A driver that knows a rank's next calls may forecast its sends and
// receives a few calls ahead (WillPost, PostLead) while WantsForecasts says
// they can help: the engine then loads the matching-index entries and ops
// they will touch before the rank makes them, which in a many-rank exchange
// turns misses in turn into misses at once. Forecasts change nothing else.
// The trace driver forecasts; the code driver cannot (user code decides its
// next call as it runs).
package sim
