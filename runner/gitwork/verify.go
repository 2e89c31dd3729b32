package gitwork

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/sched"
)

// A merge's verify command, run on the merged tree, the same on both
// engines: how its end is waited for and what of its output a failure
// holds.

// QuoteArgv shows a command line as a person would type it.
func QuoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// Verified waits for p, the merge's verify command argv, up to timeout
// (past it, or when ctx ends, its process group is terminated, given
// grace), calls sweep once it has exited (stopped: it was cut short), and
// says what came of it: nil when it passed, else a problem holding its
// last lines (tail).
func (t *MergeTree) Verified(ctx context.Context, p *proc.Process, argv []string, timeout, grace time.Duration, tail *Tail, sweep func(stopped bool)) (*sched.MergeProblem, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	why := ""
	select {
	case <-p.Done():
	case <-timer.C:
		why = fmt.Sprintf("did not finish within %s", timeout)
		p.Terminate(grace)
	case <-ctx.Done():
		p.Terminate(grace)
	}
	<-p.Done()
	if sweep != nil {
		sweep(why != "" || ctx.Err() != nil)
	}
	p.WaitOutput()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if e := p.Exit(); why == "" && (e.Signaled || e.Code != 0) {
		why = e.String()
	}
	if why == "" {
		return nil, nil
	}
	return &sched.MergeProblem{Kind: "verify", Output: tail.String(),
		Reason: fmt.Sprintf("the verify command %s %s on %s", QuoteArgv(argv), why, t.What)}, nil
}

// Tail keeps the last Max lines written to it (a verify command's).
type Tail struct {
	Max   int
	mu    sync.Mutex
	lines []string
}

// Add keeps line (cut at 500 bytes).
func (l *Tail) Add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(line) > 500 {
		line = line[:500] + " …"
	}
	l.lines = append(l.lines, line)
	if len(l.lines) > l.Max {
		l.lines = l.lines[len(l.lines)-l.Max:]
	}
}

func (l *Tail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
