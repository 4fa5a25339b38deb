package faults

import "time"

// Message is what the engine tells an Injector about one message when its send
// is posted. The engine asks once per message, in its own deterministic order.
type Message struct {
	Src, Dst int
	Tag      int
	Op       string // the trace op name of the send: "Send", "Isend", "Stream.Send", ...
	Bytes    int64
	Seq      uint64 // the sender's op sequence number (identifies the message in a trace)
}

// Action is what happens to one message.
type Action struct {
	Delay time.Duration // extra virtual latency before it arrives
	Drop  bool          // the message never reaches its receiver
}

// An Injector decides the faults of one run. The engine of package gpu/sim
// consults it; a nil Injector means no faults.
type Injector interface {
	// Sync reports zero buffering: every standard send behaves as synchronous.
	Sync() bool
	// Mutate reports that in-flight send buffers are read at the latest legal
	// moment (the sender's completion) instead of when the transfer starts.
	Mutate() bool
	// Message decides the fate of one message.
	Message(m Message) Action
}
