// Package harness runs p2ptrace inside `go test`: N ranks of your exchange
// code on the simulated backend under many seeds and fault plans, failing the
// test with the findings of the first failing run, the smallest set of
// injected faults that still fails, and two commands that reproduce it.
//
//	func TestHaloExchange(t *testing.T) {
//		harness.Run(t, 4, haloExchange,
//			harness.Faults("sync"),
//			harness.Faults("delay"),
//			harness.Faults("mutate"),
//			harness.Seeds(100))
//	}
//
// A failure reads:
//
//	p2ptrace: seed 0 under sync failed (deadlock):
//	deadlock: no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0
//	    rank 0 blocked in Send to rank 1 tag 0 (64 bytes) at halo_test.go:31
//	    rank 1 blocked in Send to rank 0 tag 0 (64 bytes) at halo_test.go:31
//	reproduce:
//	  go test -run '^TestHaloExchange$' example.com/solver/halo -p2ptrace.seed=0 -p2ptrace.fault='sync'
//	  p2ptrace replay --fault 'sync' --seed 0 /tmp/p2ptrace-harness/TestHaloExchange-seed0.db
//
// Tests of known-bad patterns use Expect: the test passes only if those
// finding kinds appear. Every run is bounded by Timeout (wall clock), and
// gpu.Launch accounts for every rank goroutine before it returns.
//
// Flags: -p2ptrace.seed=N reruns one seed, -p2ptrace.seeds=N widens the
// sweep, -p2ptrace.fault='spec;spec' runs one plan, -p2ptrace.dir=DIR keeps
// the traces of failing runs there.
package harness
