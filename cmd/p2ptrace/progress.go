package main

import (
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// progressTick is how often a progress bar is redrawn.
const progressTick = 100 * time.Millisecond

// progress shows a bar on stderr while a long command runs: only when stderr
// is a terminal, and only once the command has run for the factory's
// progressDelay (a command that ends sooner draws nothing). The command
// counts with set or count, from any goroutine (atomics); a goroutine of
// the bar's own redraws from a ticker, so that counting costs the workers
// nothing and the terminal is written by one goroutine alone.
type progress struct {
	done, total atomic.Int64
	stop        chan struct{} // nil: no bar
	stopped     chan struct{}
}

// newProgress starts the bar of a command that counts up to total (0: not
// known yet, see count) on f.Err; quiet draws nothing (--json).
func newProgress(f *factory, total int, what string, quiet bool) *progress {
	p := &progress{}
	p.total.Store(int64(total))
	file, ok := f.Err.(*os.File)
	if quiet || !ok || !isatty.IsTerminal(file.Fd()) {
		return p
	}
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	go p.draw(f.Err, what, f.progressDelay)
	return p
}

// draw redraws the bar every tick once the delay is over, until finish
// (which draws the last count, if the delay is over by then).
func (p *progress) draw(w io.Writer, what string, delay time.Duration) {
	defer close(p.stopped)
	start := time.Now()
	tick := time.NewTicker(progressTick)
	defer tick.Stop()
	var bar *progressbar.ProgressBar
	for {
		stop := false
		select {
		case <-p.stop:
			stop = true
		case <-tick.C:
		}
		if total := p.total.Load(); total > 0 && time.Since(start) >= delay {
			if bar == nil {
				// Drawn at once, from 0: a command ending now shows its bar
				// once before it is cleared.
				bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
					progressbar.OptionThrottle(0), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(),
					progressbar.OptionSetRenderBlankState(true))
			} else if bar.GetMax64() != total {
				bar.ChangeMax64(total)
			}
			bar.Set64(p.done.Load())
		}
		if stop {
			if bar != nil {
				bar.Finish()
			}
			return
		}
	}
}

// set counts done of the total.
func (p *progress) set(done int) { p.done.Store(int64(done)) }

// count counts done of total, when the total is known only as the command runs.
func (p *progress) count(done, total int) {
	p.total.Store(int64(total))
	p.done.Store(int64(done))
}

// finish takes the bar off the terminal; the command prints after it.
func (p *progress) finish() {
	if p.stop != nil {
		close(p.stop)
		<-p.stopped
	}
}
