package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/spec"
)

// Exit codes (docs/design.md#exit-codes).
const (
	exitOK          = 0   // success
	exitFailed      = 1   // the run failed or the specs are invalid
	exitUsage       = 2   // bad flags, unreadable file
	exitPaused      = 3   // the run waits for a person (manual GO or a question)
	exitInterrupted = 130 // interrupted by a signal
)

// exitError carries an exit code; with a nil err nothing more is printed (the
// command has already said what happened, as validate does with its report).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return "exit status " + strconv.Itoa(e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// silent ends the command with code, having printed everything already.
func silent(code int) error { return &exitError{code: code} }

// usageError is a usage error (exit 2) with a message.
func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

func isSilent(err error) bool {
	var e *exitError
	var h *control.HandOverError // orch-temporal printed its own error
	return errors.As(err, &e) && e.err == nil || errors.Is(err, errOutputGone) || errors.As(err, &h) && h.Output == ""
}

// flagError marks errors cobra reports for bad flags or arguments.
type flagError struct{ error }

func (e flagError) Unwrap() error { return e.error }

func isFlagError(err error) bool {
	var fe flagError
	return errors.As(err, &fe) || strings.Contains(err.Error(), "unknown command") || strings.Contains(err.Error(), "unknown flag")
}

// exitCode maps any error to the exit code a user or a CI script sees. This is
// the one place where that mapping lives.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	if errors.Is(err, errOutputGone) { // what was wanted has been read
		return exitOK
	}
	var h *control.HandOverError
	if errors.As(err, &h) { // orch-temporal's own status
		return h.Code
	}
	var pe *spec.PathError
	if errors.As(err, &pe) || isFlagError(err) {
		return exitUsage
	}
	switch control.KindOf(err) {
	case control.Invalid, control.NotFound:
		return exitUsage
	}
	return exitFailed
}

// commandPath names the command a bad command line was for, for the hint.
func commandPath(root *cobra.Command, args []string) string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return root.Name()
	}
	return cmd.CommandPath()
}
