package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// escapedDescendants finds processes that carry the attempt's token but are
// no longer in its process group. Orphans come to orch as their subreaper,
// so only orch's own children need looking at.
func escapedDescendants(token string, pgid int) []int {
	if token == "" {
		return nil
	}
	needle := []byte("ORCH_ATTEMPT_TOKEN=" + token + "\x00")
	var out []int
	for _, pid := range ownChildren() {
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && bytes.Contains(append(env, 0), needle) {
			out = append(out, pid)
		}
	}
	return out
}

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
