// Package cacheline asks the processor to start loading a cache line
// without waiting for it: the engine's look-aheads (its event queue's ring
// and its forecast posts, package gpu/sim) use it to have many misses in
// flight at once. A load would do the same until the processor's
// window of instructions in flight fills, and then hold up everything
// after it: a replay's event is longer than that window.
package cacheline
