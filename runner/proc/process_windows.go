package proc

import (
	"os"
	"syscall"
	"time"
)

// Windows has no process groups to signal: runs refuse to start there
// (Supported), and these only keep the package building for the commands
// that read specs and recorded runs.

func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// Terminate kills the process (not its descendants: nothing groups them).
func (p *Process) Terminate(grace time.Duration) {
	p.kill.Do(func() { _ = p.cmd.Process.Kill() })
	select {
	case <-p.done:
	case <-time.After(grace + time.Second):
	}
}

// Sweep has nothing to sweep.
func (p *Process) Sweep(time.Duration, bool) (inGroup, escaped []int) { return nil, nil }

func newPipe(toChild bool) (mine, child *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	if toChild {
		return w, r, nil
	}
	return r, w, nil
}

// BecomeSubreaper does nothing: Windows has no subreaper.
func BecomeSubreaper() {}

// KillLeftovers finds nothing: no run was started here.
func KillLeftovers(string) []int { return nil }

// KillTokened kills nothing on Windows, where orch runs no agents.
func KillTokened(string) []int { return nil }
