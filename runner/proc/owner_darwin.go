package proc

import "golang.org/x/sys/unix"

// KillOrphanedOwned kills every process (with its process group) whose
// owner's mark (SetOwner) is under key and names a process that is gone,
// and returns the pids it killed. It reads every process's environment:
// run it once, when the owner starts.
func KillOrphanedOwned(key string) []int {
	return killWhere(func(pid int) bool { return ownedByDead(pid, key) })
}

func ownedByDead(pid int, key string) bool {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return false
	}
	for _, kv := range procEnv(b) {
		if orphanedOwned(kv, key) {
			return true
		}
	}
	return false
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	p, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err == nil && p.Proc.P_pid == int32(pid) && p.Proc.P_stat != 5 // SZOMB
}
