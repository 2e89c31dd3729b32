package temporal

import (
	"errors"

	"go.temporal.io/sdk/temporal"
)

// resultOf is the RunResult a closed workflow carries: its result when it
// completed, its error's details when it failed or was cancelled.
func resultOf(err error, completed func(any) error) (RunResult, error) {
	var res RunResult
	if err == nil {
		return res, completed(&res)
	}
	var app *temporal.ApplicationError
	var canceled *temporal.CanceledError
	switch {
	case errors.As(err, &app) && app.Type() == FailedType:
		return res, app.Details(&res)
	case errors.As(err, &canceled):
		return res, canceled.Details(&res)
	}
	return res, err
}
