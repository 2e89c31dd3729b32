//go:build unix

package proc

import (
	"syscall"
	"time"
)

// ownGroup makes an agent process the leader of a new process group, so
// that a signal to the group reaches everything it started (unless a
// descendant leaves the group with setsid).
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Terminate stops the whole process group, and with a cgroup every
// descendant: SIGTERM, then SIGKILL after grace. It returns once the leader
// has been waited for (or after grace more). Safe to call more than once.
func (p *Process) Terminate(grace time.Duration) {
	p.kill.Do(func() {
		escaped := p.escapees()
		_ = syscall.Kill(-p.pid, syscall.SIGTERM)
		p.cg.signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
		_ = syscall.Kill(-p.pid, syscall.SIGKILL) // stragglers in the group too
		// Report the escapees only if they all died: say nothing untrue.
		if p.cg.kill() {
			p.escaped = escaped
		}
	})
	select {
	case <-p.done:
	case <-time.After(grace + time.Second):
	}
}

// Sweep runs after the leader has exited: it stops what is left of the
// process's descendants and returns their pids: those in its process group
// (-1 when they could not be listed), and, with a cgroup, those that escaped
// the group (without one, escapees are the Sweeper's to find). After
// Terminate (killed) the stragglers of the group get SIGKILL at once, else
// SIGTERM and SIGKILL after grace; escapees get the rest of the grace
// period to finish writing to its output (as they would without a cgroup,
// until the Sweeper came), then SIGKILL. Only the first call does anything.
func (p *Process) Sweep(grace time.Duration, killed bool) (inGroup, escaped []int) {
	if p.swept.Swap(true) {
		return nil, nil
	}
	inGroup = p.sweepGroup(grace, killed)
	if p.cg == nil {
		return inGroup, nil
	}
	escaped = p.escaped // stopped by Terminate
	// The leaf is given back to the run once swept: a later Terminate or
	// Sweep of this process must not touch the next process it serves.
	cg := p.cg
	p.cg = nil
	// The usual case: one read says the leaf is empty, and it serves the
	// next process as it is. Nothing is left that could still write to
	// the output, so the sweep does not wait for it to be read: the
	// attempt reports its end while its readers finish.
	if !cg.populated() {
		cg.reuse()
		return inGroup, escaped
	}
	if !killed {
		// What is left may still write: it gets the rest of the grace period
		// (the output ends at the latest grace after the leader's exit).
		p.output.Wait()
		if !cg.populated() { // it ended within the grace period
			cg.reuse()
			return inGroup, escaped
		}
	}
	defer cg.release()
	if left := cg.members(); len(left) > 0 && cg.kill() {
		escaped = append(escaped, left...)
		reapOrphans(left)
	}
	return inGroup, escaped
}

// sweepGroup stops what is left in the process group. Zombies of the group
// that were reparented to orch are reaped as they appear: a zombie still
// counts as a member of its group.
func (p *Process) sweepGroup(grace time.Duration, killed bool) (inGroup []int) {
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

// escapees lists the processes of its cgroup that are not in its process
// group.
func (p *Process) escapees() []int {
	var out []int
	for _, pid := range p.cg.members() {
		if g, err := syscall.Getpgid(pid); err != nil || g != p.pid {
			out = append(out, pid)
		}
	}
	return out
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
