package proc

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// macOS has no child subreaper and no /proc. The process table comes from
// sysctl (kern.proc.all), a process's environment from kern.procargs2 (for
// orch's user's processes only). A descendant that leaves its process group
// with setsid is reparented to launchd (pid 1), not to orch: the sweeps look
// for it there, by its attempt token, so it is still found and killed, but
// orch cannot reap it, and it runs until the next sweep (up to a second).

// BecomeSubreaper does nothing: macOS has no child subreaper.
func BecomeSubreaper() {}

// groupMembers lists the processes of process group pgid.
func groupMembers(pgid int) []int {
	procs, _ := unix.SysctlKinfoProcSlice("kern.proc.all")
	var out []int
	for _, p := range procs {
		if int(p.Eproc.Pgid) == pgid {
			out = append(out, int(p.Proc.P_pid))
		}
	}
	return out
}

// reapOrphans has nothing to do: the killed orphans are launchd's children.
func reapOrphans([]int) {}

// KillLeftovers kills what a run's dead owner left running, for orch stop
// and orch resume of a run whose owner died: every process (with its
// process group) that carries one of the run's attempt tokens. It returns
// the pids it killed.
func KillLeftovers(runID string) []int { return KillTokened(runID + "/") }

// KillTokened kills every process (with its process group) whose attempt
// token (ORCH_ATTEMPT_TOKEN) starts with prefix, and returns the pids it
// killed: for a one-off clean-up, never on a hot path.
func KillTokened(prefix string) []int {
	return killWhere(func(pid int) bool { _, ok := attemptToken(pid, prefix); return ok })
}

// killWhere kills every process of this user (with its process group)
// that match says is to go, and returns their pids.
func killWhere(match func(pid int) bool) []int {
	procs, _ := unix.SysctlKinfoProcSlice("kern.proc.all")
	self, ownGroup := os.Getpid(), syscall.Getpgrp()
	uid := uint32(os.Getuid())
	var killed []int
	for _, p := range procs {
		pid := int(p.Proc.P_pid)
		if pid == self || pid <= 1 || p.Eproc.Ucred.Uid != uid || !match(pid) {
			continue
		}
		if g := int(p.Eproc.Pgid); g != ownGroup && g > 1 {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		killed = append(killed, pid)
	}
	return killed
}

// attemptToken returns the ORCH_ATTEMPT_TOKEN in pid's environment when it
// starts with prefix.
func attemptToken(pid int, prefix string) (string, bool) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return "", false
	}
	for _, kv := range procEnv(b) {
		if tok, ok := bytes.CutPrefix(kv, []byte("ORCH_ATTEMPT_TOKEN=")); ok && bytes.HasPrefix(tok, []byte(prefix)) {
			return string(tok), true
		}
	}
	return "", false
}

// procEnv returns the environment in a kern.procargs2 buffer: argc (int32),
// the executable's path, NUL padding, argc arguments, then the environment,
// each NUL-terminated, up to an empty string.
func procEnv(b []byte) [][]byte {
	if len(b) < 4 {
		return nil
	}
	argc := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	i := bytes.IndexByte(b, 0) // the executable's path
	if i < 0 {
		return nil
	}
	b = bytes.TrimLeft(b[i:], "\x00")
	for ; argc > 0; argc-- {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	var env [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i <= 0 {
			break
		}
		env = append(env, b[:i])
		b = b[i+1:]
	}
	return env
}
