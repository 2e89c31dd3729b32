package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// procInfo is what /proc/PID/stat says of a process.
type procInfo struct {
	ppid, pgid, sid int
	dead            bool // a zombie: it has exited, its parent has not reaped it
}

// readProcTable reads every process's parent, group and session from /proc.
func readProcTable() map[int]procInfo {
	out := map[int]procInfo{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if info, ok := readStat(pid); ok {
			out[pid] = info
		}
	}
	return out
}

// readStat reads one process's /proc/PID/stat: "pid (comm) state ppid pgrp
// session ...", where comm may hold any byte, parentheses too.
func readStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	pgid, _ := strconv.Atoi(string(f[2]))
	sid, _ := strconv.Atoi(string(f[3]))
	return procInfo{ppid: ppid, pgid: pgid, sid: sid, dead: f[0][0] == 'Z' || f[0][0] == 'X'}, true
}

// attemptToken is the ORCH_ATTEMPT_TOKEN in a process's environment, "" when
// it has none (started with a cleared environment: env -i) or is gone.
func attemptToken(pid int) string {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if tok, ok := bytes.CutPrefix(kv, []byte("ORCH_ATTEMPT_TOKEN=")); ok {
			return string(tok)
		}
	}
	return ""
}

// orphans lists the live processes reparented to orch, the subreaper: its
// children outside its own process group (the agents' descendants whose
// parent died), each with its attempt token ("" when it has none). Agents
// orch started are its children too, each the leader of its own group: they
// carry their attempt's token, live while they run. Children in orch's own
// group are not agents' (a program embedding the runner may start its own).
// Zombies among them are reaped, unless one may be an agent that os/exec
// waits for (the leader of its own group in orch's session).
func orphans() map[int]string {
	if !hasChildren() {
		return nil // the usual case: nothing to read in /proc
	}
	self, ownGroup, ownSession := os.Getpid(), syscall.Getpgrp(), mySession()
	var out map[int]string
	for _, pid := range ownChildren() {
		info, ok := readStat(pid)
		if !ok || info.ppid != self || info.pgid == ownGroup {
			continue
		}
		if info.dead {
			if !(info.pgid == pid && info.sid == ownSession) {
				reapOrphans([]int{pid})
			}
			continue
		}
		if out == nil {
			out = map[int]string{}
		}
		out[pid] = attemptToken(pid)
	}
	return out
}

func mySession() int {
	sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	return int(sid)
}

// killTrees kills each root with all its descendants and returns, per root,
// the pids that are gone (root first). Forks cannot outrun it: every process
// of the trees is stopped (SIGSTOP) first, again and again until a look at
// /proc finds no child it has not stopped, and only then are all killed.
// A process is counted only once it has died: what does not die within
// a few seconds (stuck in the kernel) is not reported as killed.
func killTrees(roots []int) map[int][]int {
	member := map[int]int{} // pid -> its root
	self := os.Getpid()     // an orch stop run by an agent of the run: not itself
	for grew := true; grew; {
		grew = false
		table := readProcTable()
		kids := map[int][]int{}
		for pid, info := range table {
			kids[info.ppid] = append(kids[info.ppid], pid)
		}
		var visit func(pid, root int)
		visit = func(pid, root int) {
			if info, ok := table[pid]; !ok || info.dead || pid == self {
				return
			}
			if _, seen := member[pid]; !seen {
				member[pid] = root
				_ = syscall.Kill(pid, syscall.SIGSTOP)
				grew = true
			}
			for _, k := range kids[pid] { // the ppid links form a tree: no cycle
				visit(k, root)
			}
		}
		for _, root := range roots {
			visit(root, root)
		}
	}
	for pid := range member {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return waitGone(member)
}

// waitGone waits (up to 5s) until the processes of member (pid -> root)
// have died, reaping those reparented to orch, and groups the dead by root.
func waitGone(member map[int]int) map[int][]int {
	dead := map[int]bool{}
	for deadline := time.Now().Add(5 * time.Second); len(dead) < len(member) && time.Now().Before(deadline); {
		for pid := range member {
			if dead[pid] {
				continue
			}
			var ws syscall.WaitStatus
			got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if info, ok := readStat(pid); got == pid || !ok || info.dead {
				dead[pid] = true
			}
		}
		if len(dead) < len(member) {
			time.Sleep(2 * time.Millisecond)
		}
	}
	out := map[int][]int{}
	for pid, root := range member {
		if dead[pid] {
			if pid == root {
				out[root] = append([]int{pid}, out[root]...)
			} else {
				out[root] = append(out[root], pid)
			}
		}
	}
	return out
}
