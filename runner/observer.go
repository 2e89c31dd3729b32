package runner

import (
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// observeLag is how long the observer gathers events before it shows
// them: a commit hands its events over without waking anyone while a
// gathering is under way, so a busy run pays one wake-up per lag, not one
// per commit, and a person cannot tell the difference.
const observeLag = 10 * time.Millisecond

// observer shows committed events to Options.Observe on its own goroutine,
// in the order they were handed over (their seq order: see
// recording.commit). A commit only hands its events over, so neither the
// loop nor a GO waits for lines written to a terminal or a CI log (a
// paused terminal, a full pipe), and a GO'd attempt does not wait for the
// loop to finish the display before it gets a processor. sync shows what
// is queued at once (a prompt comes after what led to it), close too:
// every event is shown before Run returns.
type observer struct {
	show    func(record.Event)
	wake    chan struct{}      // events were handed over since the goroutine last looked
	syncs   chan chan struct{} // sync's requests: closed once what was queued is shown
	closing chan struct{}      // closed by close: show what is queued and end
	done    chan struct{}      // the goroutine is over

	mu    sync.Mutex
	queue []record.Event
}

func newObserver(show func(record.Event)) *observer {
	o := &observer{show: show, wake: make(chan struct{}, 1), syncs: make(chan chan struct{}),
		closing: make(chan struct{}), done: make(chan struct{})}
	go o.run()
	return o
}

// add queues events to show; it never waits for the display.
func (o *observer) add(events ...record.Event) {
	o.mu.Lock()
	o.queue = append(o.queue, events...)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default: // the goroutine has yet to look: it takes these too
	}
}

func (o *observer) run() {
	defer close(o.done)
	for {
		var synced chan struct{}
		select {
		case <-o.wake:
			synced = o.gather()
		case synced = <-o.syncs:
		case <-o.closing:
		}
		o.showQueued()
		if synced != nil {
			close(synced)
		}
		select {
		case <-o.closing:
			o.showQueued()
			return
		default:
		}
	}
}

// gather waits observeLag for more events, or less for sync or close.
func (o *observer) gather() (synced chan struct{}) {
	t := time.NewTimer(observeLag)
	defer t.Stop()
	select {
	case <-t.C:
	case synced = <-o.syncs:
	case <-o.closing:
	}
	return synced
}

// sync returns once every event handed over before it has been shown.
func (o *observer) sync() {
	synced := make(chan struct{})
	select {
	case o.syncs <- synced:
		<-synced
	case <-o.done:
	}
}

func (o *observer) showQueued() {
	for {
		o.mu.Lock()
		batch := o.queue
		o.queue = nil
		o.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		for _, e := range batch {
			o.show(e)
		}
	}
}

// close shows what is queued and returns once it has been shown. Events
// handed over later (none: the run's goroutines are over) are not shown.
func (o *observer) close() {
	close(o.closing)
	<-o.done
}
