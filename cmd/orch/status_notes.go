package main

import (
	"fmt"
	"io"

	"github.com/orch-cli/orch/control"
)

// printAttemptNotes prints what the run noted about its attempts: a retry
// to come, a worker lost and the GO dispatched again.
func printAttemptNotes(w io.Writer, st *control.RunStatus) {
	var lines []string
	for _, c := range st.Cues {
		for _, a := range c.Attempts {
			for _, n := range a.Notes {
				lines = append(lines, "  "+oneLine(control.NoteLine(c.ID, a, n), 160))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\nattempt notes\n")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
