package proc

import (
	"bytes"
	"os"
	"strconv"
)

// KillOrphanedOwned kills every process whose owner's mark (SetOwner) is
// under key and names a process that is gone, with all its descendants,
// and returns the pids it killed. It reads every process's environment:
// run it once, when the owner starts.
func KillOrphanedOwned(key string) []int {
	self, table := os.Getpid(), readProcTable()
	var roots []int
	for pid, info := range table {
		if pid == self || info.dead {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || !bytes.Contains(env, []byte(OwnerEnv+"=")) {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if orphanedOwned(kv, key) {
				roots = append(roots, pid)
				break
			}
		}
	}
	var killed []int
	for _, pids := range killTrees(roots) {
		killed = append(killed, pids...)
	}
	return killed
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	info, ok := readStat(pid)
	return ok && !info.dead
}
