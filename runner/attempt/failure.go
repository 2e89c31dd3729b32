package attempt

import "fmt"

// Failure is a classified reason an attempt did not complete.
type Failure struct {
	Class  string // exit:N, timeout, malfunction, signal, contract, failed, stopped, start
	Reason string
	Retry  bool // the agent said the failure is retriable (task.failed retriable)
}

func (f *Failure) Error() string { return f.Reason }

func Failf(class, format string, args ...any) *Failure {
	return &Failure{Class: class, Reason: fmt.Sprintf(format, args...)}
}
