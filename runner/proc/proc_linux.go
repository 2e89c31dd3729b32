package proc

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

// BecomeSubreaper makes orch the parent of every orphaned descendant
// (PR_SET_CHILD_SUBREAPER): a grandchild that escapes its process group with
// setsid is then still ours to find and stop, instead of init's.
func BecomeSubreaper() {
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

// KillLeftovers kills what a run's dead owner left running, for orch stop
// and orch resume of a run whose owner died: everything in the run's
// cgroup, if it had one, and every process that carries one of the run's
// attempt tokens, each with all its descendants. It returns the pids it
// killed. A descendant that cleared its environment (env -i) and whose
// parent died was reparented to init when the owner died: nothing ties it
// to the run but the cgroup. It reads every process's environment, so it
// runs once, when a run is resumed or stopped, not on any hot path.
func KillLeftovers(runID string) []int {
	var killed []int
	for _, dir := range findRunCgroups(runID) {
		killed = append(killed, removeCgroupTree(dir)...)
	}
	return append(killed, KillTokened(runID+"/")...)
}

// KillTokened kills every process whose attempt token (ORCH_ATTEMPT_TOKEN)
// starts with prefix, each with all its descendants, and returns the pids
// it killed. It reads every process's environment: for a one-off clean-up
// (a run resumed, an attempt run again after its worker was lost), never
// on a hot path.
func KillTokened(prefix string) []int {
	// The environment is NUL-separated: the token is a variable's start,
	// not the same text inside another variable.
	needle := []byte("\x00ORCH_ATTEMPT_TOKEN=" + prefix)
	return killWithEnv(func(env []byte) bool { return bytes.HasPrefix(env, needle[1:]) || bytes.Contains(env, needle) })
}

// killWithEnv kills every other live process whose environment (its
// /proc/PID/environ) match says is to go, each with all its descendants,
// and returns the pids it killed.
func killWithEnv(match func(env []byte) bool) []int {
	self := os.Getpid()
	var roots []int
	for pid, info := range readProcTable() {
		if pid == self || info.dead {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && match(env) {
			roots = append(roots, pid)
		}
	}
	var killed []int
	for _, pids := range killTrees(roots) {
		killed = append(killed, pids...)
	}
	return killed
}
