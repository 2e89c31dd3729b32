//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// writeRusage appends orch's own CPU seconds and its children's (user,
// system) to file, for the hidden ORCH_RUSAGE (see profile): a
// whole-process timing counts the agents' CPU with orch's.
func writeRusage(file string) error {
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		return err
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		return err
	}
	secs := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "self %.6f %.6f children %.6f %.6f\n", secs(self.Utime), secs(self.Stime), secs(children.Utime), secs(children.Stime))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
