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

// A spawned child's slot comes back when it is announced, even when the
// announcement comes before the spawn's answer kept the loan, and at the
// phase's end for the rest.
func TestLoansComeBack(t *testing.T) {
	s := NewSlots(1)
	s.TryReserveSlot(nil)
	l := newLoans()
	l.keep("T/1", s.Lend())
	l.settle("T/2") // announced before it was kept
	l.keep("T/2", s.Lend())
	l.keep("T/3", s.Lend())
	if s.out != 2 {
		t.Fatalf("%d slots lent, want 2 (T/1 and T/3)", s.out)
	}
	l.settle("T/1")
	if s.out != 1 {
		t.Fatalf("%d slots lent after T/1's announce, want 1", s.out)
	}
	l.end()
	l.keep("T/4", s.Lend()) // after the phase: back at once
	if s.out != 0 {
		t.Fatalf("%d slots lent after the phase ended, want 0", s.out)
	}
}
