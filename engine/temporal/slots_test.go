package temporal

import (
	"context"
	"testing"
	"time"
)

// reserved reports whether a ReserveSlot gets a slot within wait.
func reserved(s *Slots, wait time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	p, err := s.ReserveSlot(ctx, nil)
	return err == nil && p != nil
}

// The cap bounds the slots; a lent slot is room for one more, which a
// waiting reservation gets; taking it back stops no phase at work, and
// makes room again only once phases end.
func TestSlotsLentWhileWaiting(t *testing.T) {
	s := NewSlots(1)
	if !reserved(s, time.Second) {
		t.Fatal("the first slot was not given")
	}
	if s.TryReserveSlot(nil) != nil {
		t.Fatal("a second slot was given beyond the cap")
	}
	got := make(chan bool, 1)
	go func() { got <- reserved(s, 30*time.Second) }()
	back := s.Lend() // the phase at work waits for its child
	if !<-got {
		t.Fatal("the lent slot did not go to the waiting reservation")
	}
	back() // the child ended: 2 at work, cap 1
	back() // once only
	s.ReleaseSlot(nil)
	if s.TryReserveSlot(nil) != nil {
		t.Fatal("a slot was given with the cap's phase still at work")
	}
	s.ReleaseSlot(nil)
	if s.TryReserveSlot(nil) == nil {
		t.Fatal("no slot once every phase ended")
	}
	var none *Slots
	none.Lend()() // a worker without Slots lends nothing
}

// A phase lends one slot while it has children, however many: back when
// the last is announced (even one announced before spawnChild kept it) or
// its handoff answered, or when the phase ends.
func TestLoansComeBack(t *testing.T) {
	s := NewSlots(1)
	l := newLoans(s)
	lent := func(want int, when string) {
		t.Helper()
		if s.out != want {
			t.Fatalf("%s: %d slots lent, want %d", when, s.out, want)
		}
	}
	l.add()
	l.keep("T/1")
	l.add()
	l.add() // a handoff
	lent(1, "three children")
	l.announced("T/2") // announced before it was kept
	l.keep("T/2")
	l.announced("T/1")
	lent(1, "the handoff's child at work")
	l.done()
	lent(0, "no child left")
	l.add()
	l.keep("T/3")
	lent(1, "a spawned child at work")
	l.end()
	lent(0, "the phase over")
	l.add()
	l.done()
	l.done()
	lent(0, "after the phase")
	if s.TryReserveSlot(nil) == nil || s.TryReserveSlot(nil) != nil {
		t.Fatal("the cap is not 1 once the loans are back")
	}
}
