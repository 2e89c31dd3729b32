package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

const prSetChildSubreaper = 36

var subreaperOnce sync.Once

// becomeSubreaper makes orch the parent of every orphaned descendant
// (PR_SET_CHILD_SUBREAPER): a grandchild that escapes its process group with
// setsid is then still ours to find and stop, instead of init's.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}

// groupMembers lists the processes of process group pgid.
func groupMembers(pgid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// escapees finds orch's children that carry an attempt token of the run
// (prefix) whose attempt is over (not live): descendants that escaped their
// process group with setsid and were reparented to orch, the subreaper. The
// agents orch started itself carry live tokens until they are reaped. It
// returns each pid with its token.
func escapees(prefix string, live func(token string) bool) map[int]string {
	if !hasChildren() {
		return nil // the usual case at a run's end: nothing to read in /proc
	}
	var out map[int]string
	for _, pid := range ownChildren() {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if tok, ok := bytes.CutPrefix(kv, []byte("ORCH_ATTEMPT_TOKEN=")); ok && bytes.HasPrefix(tok, []byte(prefix)) && !live(string(tok)) {
				if out == nil {
					out = map[int]string{}
				}
				out[pid] = string(tok)
			}
		}
	}
	return out
}

// hasChildren reports whether orch has a child process, running or not yet
// reaped, without reaping it (WNOWAIT): waitid fails with ECHILD only when
// there is none.
func hasChildren() bool {
	var info [128]byte // siginfo_t
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pAll, 0, uintptr(unsafe.Pointer(&info[0])),
		syscall.WEXITED|syscall.WSTOPPED|syscall.WCONTINUED|syscall.WNOHANG|syscall.WNOWAIT, 0, 0)
	return errno != syscall.ECHILD
}

const pAll = 0 // waitid's P_ALL

// ownChildren lists the children of this process, from every thread's
// /proc children file.
func ownChildren() []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// reapOrphans collects the exit status of killed orphans that were
// reparented to orch, so they do not linger as zombies.
func reapOrphans(pids []int) {
	for _, pid := range pids {
		if pid <= 0 {
			continue
		}
		var ws syscall.WaitStatus
		for i := 0; i < 50; i++ {
			got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if got == pid || err != nil {
				break
			}
			syscall.Nanosleep(&syscall.Timespec{Nsec: 2_000_000}, nil)
		}
	}
}

// KillLeftovers kills every agent process (with its process group) a run
// left running: for orch stop and orch resume of a run whose owner died.
func KillLeftovers(runID string) []int { return killLeftovers(runID + "/") }

// killLeftovers kills every process (with its process group) that carries
// an attempt token starting with prefix: what a run's dead owner left
// running. It reads every process's environment, so it runs once, when a run
// is resumed, not on any hot path.
func killLeftovers(prefix string) []int {
	needle := []byte("ORCH_ATTEMPT_TOKEN=" + prefix)
	self, ownGroup := os.Getpid(), syscall.Getpgrp()
	var killed []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g != ownGroup && g > 1 {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		killed = append(killed, pid)
	}
	reapOrphans(killed)
	return killed
}
