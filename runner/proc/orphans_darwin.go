package proc

import (
	"os"
	"sort"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On macOS an agent's descendant that outlives its parent is reparented to
// launchd (pid 1), not to orch: the orphans are launchd's children of orch's
// user that carry an attempt token. One whose environment was cleared
// (env -i) cannot be told apart from the user's other processes there, so
// it is not found (the README's platform table says so).

// darwinProc is what the sweeps need of a process table entry.
type darwinProc struct{ ppid, uid int }

func processTable() map[int]darwinProc {
	procs, _ := unix.SysctlKinfoProcSlice("kern.proc.all")
	table := make(map[int]darwinProc, len(procs))
	for _, p := range procs {
		if p.Proc.P_stat == 5 { // SZOMB: gone but for its parent's wait
			continue
		}
		table[int(p.Proc.P_pid)] = darwinProc{ppid: int(p.Eproc.Ppid), uid: int(p.Eproc.Ucred.Uid)}
	}
	return table
}

// orphans lists launchd's children of orch's user that carry an attempt
// token, with the token.
func orphans() map[int]string {
	uid := os.Getuid()
	var out map[int]string
	for pid, p := range processTable() {
		if p.ppid != 1 || p.uid != uid {
			continue
		}
		if tok, ok := attemptToken(pid, ""); ok {
			if out == nil {
				out = map[int]string{}
			}
			out[pid] = tok
		}
	}
	return out
}

// killTrees stops each root and all its descendants (SIGSTOP, again until
// no new one appears, so a forking tree cannot outrun it), kills them all,
// and returns the dead grouped by root, the root first. What does not die
// within a few seconds is not reported as killed.
func killTrees(roots []int) map[int][]int {
	member := map[int]int{} // pid -> its root
	self := os.Getpid()
	for grew := true; grew; {
		grew = false
		table := processTable()
		kids := map[int][]int{}
		for pid, p := range table {
			kids[p.ppid] = append(kids[p.ppid], pid)
		}
		var visit func(pid, root int)
		visit = func(pid, root int) {
			if _, ok := table[pid]; !ok || pid == self || pid <= 1 {
				return
			}
			if _, seen := member[pid]; !seen {
				member[pid] = root
				_ = syscall.Kill(pid, syscall.SIGSTOP)
				grew = true
			}
			for _, k := range kids[pid] {
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
	var gone map[int]bool
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		table := processTable()
		gone = map[int]bool{}
		for pid := range member {
			if _, alive := table[pid]; !alive {
				gone[pid] = true
			}
		}
		if len(gone) == len(member) || time.Now().After(deadline) {
			break
		}
	}
	dead := map[int][]int{}
	for _, root := range roots { // the root first, then its descendants in pid order
		if gone[root] {
			dead[root] = []int{root}
		}
	}
	pids := make([]int, 0, len(gone))
	for pid := range gone {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	for _, pid := range pids {
		if root := member[pid]; pid != root {
			dead[root] = append(dead[root], pid)
		}
	}
	return dead
}
