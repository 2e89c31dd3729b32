//go:build unix

package runner

import (
	"syscall"
	"time"
)

// ownGroup makes an agent process the leader of a new process group, so
// that a signal to the group reaches everything it started (unless a
// descendant leaves the group with setsid).
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// terminate stops the whole process group: SIGTERM, then SIGKILL after
// grace. It returns once the leader has been waited for (or after grace
// more). Safe to call more than once.
func (p *proc) terminate(grace time.Duration) {
	p.kill.Do(func() {
		_ = syscall.Kill(-p.pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
		_ = syscall.Kill(-p.pid, syscall.SIGKILL) // stragglers in the group too
	})
	select {
	case <-p.done:
	case <-time.After(grace + time.Second):
	}
}

// sweep runs after the leader has exited: it stops what is left in the
// process group and returns those pids (-1 when they could not be listed).
// After terminate (killed) the stragglers get SIGKILL at once. Zombies of the
// group that were reparented to orch are reaped as they appear: a zombie
// still counts as a member of its group.
func (p *proc) sweep(grace time.Duration, killed bool) (inGroup []int) {
	if reapGroup(p.pid); syscall.Kill(-p.pid, 0) != nil { // the usual case: nothing left
		return nil
	}
	inGroup = groupMembers(p.pid)
	if len(inGroup) == 0 {
		inGroup = []int{-1}
	}
	sig := syscall.SIGTERM
	if killed {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-p.pid, sig)
	deadline := time.Now().Add(grace)
	for {
		reapGroup(p.pid)
		if syscall.Kill(-p.pid, 0) != nil {
			return inGroup
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	for i := 0; i < 100 && syscall.Kill(-p.pid, 0) == nil; i++ {
		reapGroup(p.pid)
		time.Sleep(5 * time.Millisecond)
	}
	return inGroup
}

// reapGroup collects the exit status of orch's children in process group
// pgid (orphans reparented to orch, the subreaper). Only called once the
// group's leader has been waited for, so it never takes os/exec's child.
func reapGroup(pgid int) {
	var ws syscall.WaitStatus
	for {
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
