package runner

import (
	"os"
	"syscall"
	"time"
)

// Windows has no process groups to signal: runs refuse to start there
// (RunsProcesses), and these only keep the package building for the
// commands that read specs and recorded runs.

func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func (p *proc) terminate(grace time.Duration) {
	p.kill.Do(func() { _ = p.cmd.Process.Kill() })
	select {
	case <-p.done:
	case <-time.After(grace + time.Second):
	}
}

func (p *proc) sweep(time.Duration, bool) (inGroup, escaped []int) { return nil, nil }

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

func becomeSubreaper()           {}
func KillLeftovers(string) []int { return nil }
func killLeftovers(string) []int { return nil }
