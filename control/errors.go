package control

import (
	"errors"
	"fmt"
)

// Kind says whose the trouble of an error is, which is all a caller needs
// to report it: the command line maps it to an exit status, the HTTP API to
// a status code.
type Kind int

const (
	// Failed: something went wrong doing what was asked (a database that
	// cannot be read or written, a damaged one). Exit 1, HTTP 500.
	Failed Kind = iota
	// Refused: the run's state refuses the request now (it is running, or
	// over; the question was closed; the owner did not act in time). Exit
	// 1, HTTP 409.
	Refused
	// Invalid: the request is wrong as asked (a cue, question or
	// escalation the run does not have, a bad value, something the run's
	// engine does not do). Exit 2, HTTP 400.
	Invalid
	// NotFound: there is no such run (or no single one for a prefix), or
	// no run database. Exit 2, HTTP 404.
	NotFound
	// Absent: what was asked of a run or of memory is not there (a
	// blackboard key, a memory item). Exit 1, HTTP 404.
	Absent
	// Unsupported: not on this platform (runs need process groups). Exit
	// 1, HTTP 501.
	Unsupported
)

// Error is an error of a known Kind; its text is Err's.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// KindOf is the Kind of err: that of the first *Error in its chain, that of
// a hand-over by orch-temporal's exit status, else Failed.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	var h *HandOverError
	if errors.As(err, &h) {
		if h.Code == 2 {
			return Invalid
		}
		return Refused
	}
	return Failed
}

// As gives err the Kind kind (nil stays nil).
func As(kind Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: kind, Err: err}
}

func invalidf(format string, a ...any) error {
	return &Error{Kind: Invalid, Err: fmt.Errorf(format, a...)}
}

func refusedf(format string, a ...any) error {
	return &Error{Kind: Refused, Err: fmt.Errorf(format, a...)}
}

// HandOverError is orch-temporal's failure of an action handed over to it:
// its exit status, and what it printed when that was captured (empty when
// it printed to the caller's own streams: nothing more is to be said).
type HandOverError struct {
	Code   int
	Output string
}

func (e *HandOverError) Error() string {
	if e.Output == "" {
		return fmt.Sprintf("orch-temporal exited %d", e.Code)
	}
	return e.Output
}
