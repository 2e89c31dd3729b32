package proc

import (
	"os"
	"path/filepath"
	"syscall"
)

// maxLeftRemoved bounds the cgroups left behind one sweeper removes (see
// removeLeft): a machine where thousands piled up is cleared over several
// runs, without one run's start doing all of it.
const maxLeftRemoved = 32

// removeLeft removes the cgroups next to c that orch processes now gone
// left behind: an orch killed with -9 (or by the kernel) never closes its
// run's cgroup, and nothing else would remove it, so on a long-lived machine
// (a CI runner, a worker) they would pile up. Only a cgroup whose owner is
// gone is removed: its lock is free (see lockCgroup: a live owner holds
// it, even while its cgroup is empty between attempts). And only an empty
// one: one with live processes in it is what orch stop and orch resume of
// its run are for (KillLeftovers); nothing is killed here. A cgroup named
// the old way (orch-run-RUN, from an orch before the names' suffix) has no
// lock to tell its owner by: it is left. It stops early when quit is
// closed, and returns how many it removed.
func (c *RunCgroup) removeLeft(quit <-chan struct{}) int {
	if c == nil {
		return 0
	}
	own := filepath.Dir(c.dir)
	entries, _ := os.ReadDir(own)
	removed := 0
	for _, e := range entries {
		select {
		case <-quit:
			return removed
		default:
		}
		dir := filepath.Join(own, e.Name())
		if !e.IsDir() || runOfCgroup(e.Name()) == "" || dir == c.dir {
			continue
		}
		if removeIfLeft(dir) {
			if removed++; removed == maxLeftRemoved {
				break
			}
		}
	}
	return removed
}

// removeIfLeft removes cgroup dir if its owner is gone and no process is in
// it, holding its lock meanwhile so that no new owner can take it, and
// reports whether it did.
func removeIfLeft(dir string) bool {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // its owner is alive (or no lock can be taken here: nothing can be told)
	}
	if populated(dir) {
		return false
	}
	return removeEmptyTree(dir)
}

// removeEmptyTree removes a cgroup with no process in it and its
// descendants (its leaves p1, p2, ... and whatever an agent made in them),
// and reports whether it is gone.
func removeEmptyTree(dir string) bool {
	if os.Remove(dir) == nil {
		return true
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			removeEmptyTree(filepath.Join(dir, e.Name()))
		}
	}
	return os.Remove(dir) == nil
}
