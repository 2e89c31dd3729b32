package temporal

import (
	"context"
	"sync"

	"go.temporal.io/sdk/worker"
)

// Slots is a worker's activity slots (orch worker --max-concurrent): at
// most Cap phases at work at once, where a phase waiting for a child it
// handed off to (or spawned, until the child is announced to it) lends
// its slot while it waits. Without the loan, ancestors waiting for their
// children could hold every slot while the children's phases wait for
// one: a tree deeper than the cap would stall until its timeouts. With
// it, the phases that hold slots without lending are at work on their own
// (not waiting for any child), so the tree always makes progress.
//
// Slots is the activity SlotSupplier of the worker's Tuner (see Tuner);
// the phases lend through Activities.Slots.
type Slots struct {
	mu             sync.Mutex
	cap, used, out int           // out: slots lent by waiting phases
	room           chan struct{} // closed (and renewed) when room may have come
}

// NewSlots is a worker's n activity slots (n at least 1).
func NewSlots(n int) *Slots {
	return &Slots{cap: max(n, 1), room: make(chan struct{})}
}

// Lend lends one slot while its caller waits for a child; the returned
// func takes it back (once; more calls do nothing). A nil Slots lends
// nothing.
func (s *Slots) Lend() (back func()) {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	s.out++
	s.wake()
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.out--
			s.mu.Unlock()
		})
	}
}

// wake tells the waiting reservations to look again (s.mu held).
func (s *Slots) wake() {
	close(s.room)
	s.room = make(chan struct{})
}

// take reserves a slot if there is room, else says what to wait for.
func (s *Slots) take() (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used < s.cap+s.out {
		s.used++
		return true, nil
	}
	return false, s.room
}

// ReserveSlot waits for a slot (the SDK asks before it polls for a task).
func (s *Slots) ReserveSlot(ctx context.Context, _ worker.SlotReservationInfo) (*worker.SlotPermit, error) {
	for {
		ok, room := s.take()
		if ok {
			return &worker.SlotPermit{}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-room:
		}
	}
}

// TryReserveSlot reserves a slot if there is one now.
func (s *Slots) TryReserveSlot(worker.SlotReservationInfo) *worker.SlotPermit {
	if ok, _ := s.take(); ok {
		return &worker.SlotPermit{}
	}
	return nil
}

// MarkSlotUsed: a reserved slot is counted already.
func (s *Slots) MarkSlotUsed(worker.SlotMarkUsedInfo) {}

// ReleaseSlot gives a slot back.
func (s *Slots) ReleaseSlot(worker.SlotReleaseInfo) {
	s.mu.Lock()
	s.used--
	s.wake()
	s.mu.Unlock()
}

// MaxSlots is 0: loans have no fixed bound (the SDK then emits no
// available-slots metric).
func (s *Slots) MaxSlots() int { return 0 }

// Tuner is a worker's tuner with s for its activities (the SDK's
// defaults for the rest).
func (s *Slots) Tuner() (worker.WorkerTuner, error) {
	fixed := func(n int) worker.SlotSupplier {
		f, _ := worker.NewFixedSizeSlotSupplier(n) // n > 0: no error
		return f
	}
	return worker.NewCompositeTuner(worker.CompositeTunerOptions{WorkflowSlotSupplier: fixed(sdkDefaultSlots),
		ActivitySlotSupplier: s, LocalActivitySlotSupplier: fixed(sdkDefaultSlots), NexusSlotSupplier: fixed(sdkDefaultSlots),
		SessionActivitySlotSupplier: fixed(s.cap)})
}

// sdkDefaultSlots is the SDK's own default for the slots orch leaves alone
// (workflow tasks, local activities, Nexus tasks).
const sdkDefaultSlots = 1000

// loans is a phase's loan: one slot, lent while the phase has a child it
// may wait for (a handoff until its result, a spawned child until it is
// announced to the phase), back when it has none or the phase ends. One
// slot whatever the number of children: the phases at work on their own
// stay within the cap, and the children still get a slot in turn.
type loans struct {
	mu    sync.Mutex
	slots *Slots
	n     int             // its children it may wait for
	back  func()          // takes the slot back (nil: none lent)
	half  map[string]bool // spawned children kept or announced, not both yet
	ended bool
}

func newLoans(s *Slots) *loans {
	return &loans{slots: s, half: map[string]bool{}}
}

// add counts a child the phase may wait for.
func (l *loans) add() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	if l.n++; l.n == 1 {
		l.back = l.slots.Lend()
	}
}

// done says one of them ended (or was refused).
func (l *loans) done() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || l.n == 0 {
		return
	}
	if l.n--; l.n == 0 {
		l.back()
		l.back = nil
	}
}

// keep holds the count of a spawned child task until it is announced.
func (l *loans) keep(task string) { l.meet(task) }

// announced: the spawned child task ended and the phase was told.
func (l *loans) announced(task string) { l.meet(task) }

// meet notes one of a spawned child's two events, kept and announced (in
// either order: the announcement may come before spawnChild keeps it); at
// the second, the phase has the child no more.
func (l *loans) meet(task string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	second := l.half[task]
	if second {
		delete(l.half, task)
	} else {
		l.half[task] = true
	}
	l.mu.Unlock()
	if second {
		l.done()
	}
}

// end takes the slot back: the phase is over.
func (l *loans) end() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.back != nil {
		l.back()
	}
	l.back, l.n, l.ended = nil, 0, true
}
