package faults

import (
	"runtime"
	"testing"
)

// BenchmarkPlanDecisions runs a fresh Plan over 1M distinct messages (4
// ranks, Isend) per iteration and reports the cost per decision: time and
// bytes allocated (which, before the plan capped what it keeps, were the
// injections it kept). Run:
//
//	go test ./faults -run '^$' -bench PlanDecisions -benchtime 5x
func BenchmarkPlanDecisions(b *testing.B) {
	for _, spec := range []string{"delay:p=0.5", "delay:p=1", "drop:nth=all,p=0.001"} {
		b.Run(spec, func(b *testing.B) {
			const n = 1 << 20
			specs := mustParse(b, spec)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			injected := 0
			for b.Loop() {
				p := NewPlan(specs, 1)
				var seq [4]uint64
				for i := range n {
					src := i & 3
					m := Message{Src: src, Dst: (src + 1) & 3, Tag: i & 7, Op: "Isend", Bytes: 64, Seq: seq[src]}
					seq[src]++
					p.Message(m)
				}
				injected += p.Count()
			}
			runtime.ReadMemStats(&after)
			d := float64(b.N) * n
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/d, "ns/decision")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/d, "B/decision")
			b.ReportMetric(float64(injected)/d, "injections/decision")
		})
	}
}
