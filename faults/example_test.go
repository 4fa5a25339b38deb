package faults_test

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/faults"
)

func ExampleParse() {
	s, err := faults.Parse("delay:max=5ms,p=0.3,rank=1")
	if err != nil {
		panic(err)
	}
	fmt.Println(s)
	fmt.Println(s.Rank.V, s.P, s.Min, s.Max)

	_, err = faults.Parse("delya")
	fmt.Println(err)
	_, err = faults.Parse("delay:foo=1")
	fmt.Println(err)
	// Output:
	// delay:rank=1,p=0.3,max=5ms
	// 1 0.3 0s 5ms
	// bad fault spec "delya": unknown kind "delya" (valid kinds: delay, drop, mutate, sync)
	// bad fault spec "delay:foo=1": unknown key "foo" for delay (valid keys: rank, src, dst, tag, op, nth, p, d, min, max)
}

func ExampleNewPlan() {
	specs, err := faults.ParseAll([]string{"delay:src=0,d=37us", "drop:dst=1,tag=3,nth=2", "sync"})
	if err != nil {
		panic(err)
	}
	plan := faults.NewPlan(specs, 42)
	// The engine asks once per message, in its deterministic order.
	for seq := uint64(0); seq < 3; seq++ {
		plan.Message(faults.Message{Src: 0, Dst: 1, Tag: 3, Op: "Isend", Seq: seq})
	}
	fmt.Println("sync:", plan.Sync())
	for _, in := range plan.Injections() {
		fmt.Println(in)
	}
	fmt.Println(faults.Describe(specs))
	fmt.Println(faults.Args(specs))

	// Replaying a subset of the injections exactly (for shrinking):
	fixed := faults.Fixed(plan.Sync(), plan.Mutate(), plan.Injections()[2:3])
	fmt.Printf("%+v\n", fixed.Message(faults.Message{Src: 0, Dst: 1, Tag: 3, Op: "Isend", Seq: 1}))
	// Output:
	// sync: true
	// delay 37us on rank 0 -> 1 tag 3 (Isend seq 0)
	// delay 37us on rank 0 -> 1 tag 3 (Isend seq 1)
	// drop on rank 0 -> 1 tag 3 (Isend seq 1)
	// delay 37us on rank 0 -> 1 tag 3 (Isend seq 2)
	// delay:src=0,d=37us, drop:dst=1,tag=3,nth=2, sync
	// [--fault delay:src=0,d=37us --fault drop:dst=1,tag=3,nth=2 --fault sync]
	// {Delay:0s Drop:true}
}
