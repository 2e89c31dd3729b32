package proc

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// KillOrphanedOwned kills every process (with its process group) whose
// owner's mark (SetOwner) is under key and names a process that is gone,
// and returns the pids it killed. It reads every process's environment:
// run it once, when the owner starts.
func KillOrphanedOwned(key string) []int {
	procs, _ := unix.SysctlKinfoProcSlice("kern.proc.all")
	self, ownGroup := os.Getpid(), syscall.Getpgrp()
	uid := uint32(os.Getuid())
	var killed []int
	for _, p := range procs {
		pid := int(p.Proc.P_pid)
		if pid == self || pid <= 1 || p.Eproc.Ucred.Uid != uid || !ownedByDead(pid, key) {
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
