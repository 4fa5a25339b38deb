package replay

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
	"strconv"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Collector keeps the events of a recorded run in memory (it is a
// gpu.EventSink: pass it to gpu.RecordTo). The harness records this way.
type Collector struct {
	ev    Events
	sites map[uint32]trace.Site
	hdr   trace.Header
}

// NewCollector returns an empty collector.
func NewCollector() *Collector { return &Collector{sites: map[uint32]trace.Site{}} }

// Append keeps a copy of ev.
func (c *Collector) Append(ev *trace.Event) {
	for int(ev.Rank) >= len(c.ev) {
		c.ev = append(c.ev, nil)
	}
	e := *ev
	e.Reqs = append([]uint64(nil), ev.Reqs...)
	c.ev[ev.Rank] = append(c.ev[ev.Rank], e)
}

// AddSite keeps a call site.
func (c *Collector) AddSite(s trace.Site) { c.sites[s.ID] = s }

// Events returns the collected events, one slice per rank (ranks that made
// no call have none), padded to ranks.
func (c *Collector) Events(ranks int) Events {
	for len(c.ev) < ranks {
		c.ev = append(c.ev, nil)
	}
	return c.ev
}

// Site renders a site id as "file:line".
func (c *Collector) Site(id uintptr) string {
	s, ok := c.sites[uint32(id)]
	if !ok || s.File == "" {
		return ""
	}
	return s.File + ":" + strconv.Itoa(s.Line)
}

// SetHeader keeps the run's header fields (gpu.Launch sets the world size,
// eager limit and link model through it), so the run replays as it ran.
func (c *Collector) SetHeader(f func(*trace.Header)) { f(&c.hdr) }

// Config is the replay configuration of the collected run.
func (c *Collector) Config() Config {
	return Config{Seed: c.hdr.Seed, EagerLimit: c.hdr.EagerLimit, Latency: c.hdr.LatencyNS, Bandwidth: c.hdr.BandwidthBps, BsendOverhead: c.hdr.BsendOverhead}
}

// Signature identifies the collected run by what its ranks called, in
// order, and what each receive matched, not by its timing: two seeds of a
// program that took the same path give the same signature, so a check of
// one covers both.
func (c *Collector) Signature() uint64 {
	h := xxhash.New()
	var b []byte
	for r, evs := range c.ev {
		b = binary.AppendUvarint(b[:0], uint64(r))
		for i := range evs {
			e := &evs[i]
			b = append(b, byte(e.Kind), byte(e.Op), byte(e.Dtype))
			for _, v := range []int64{int64(e.Seq), int64(e.Peer), int64(e.Tag), int64(e.Comm), int64(e.Stream), e.Count, e.Bytes,
				int64(e.Site), int64(e.MatchRank), int64(e.MatchSeq), int64(e.Index), int64(e.Req), boolInt(e.Flag), e.Duration} {
				b = binary.AppendVarint(b, v)
			}
			for _, q := range e.Reqs {
				b = binary.AppendUvarint(b, q)
			}
			if len(b) > 4096 {
				h.Write(b)
				b = b[:0]
			}
		}
		h.Write(b)
	}
	return h.Sum64()
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Matched returns the rank and seq of the send that rank r's op seq
// matched, from its Done event (ok false if it never completed).
func (c *Collector) Matched(r int, seq uint64) (rank int, sendSeq uint64, ok bool) {
	if r < 0 || r >= len(c.ev) {
		return 0, 0, false
	}
	for i := range c.ev[r] {
		if e := &c.ev[r][i]; e.Kind == trace.KindDone && e.Seq == seq {
			return int(e.MatchRank), e.MatchSeq, e.MatchRank >= 0
		}
	}
	return 0, 0, false
}
