package replay

import (
	"strconv"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Collector keeps the events of a recorded run in memory (it is a
// gpu.EventSink: pass it to gpu.RecordTo). The harness records this way.
type Collector struct {
	ev    Events
	sites map[uint32]trace.Site
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
