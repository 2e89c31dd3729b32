package proc

import "bytes"

// KillOrphanedOwned kills every process whose owner's mark (SetOwner) is
// under key and names a process that is gone, with all its descendants,
// and returns the pids it killed. It reads every process's environment:
// run it once, when the owner starts.
func KillOrphanedOwned(key string) []int {
	mark := []byte(OwnerEnv + "=")
	return killWithEnv(func(env []byte) bool {
		if !bytes.Contains(env, mark) {
			return false
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if orphanedOwned(kv, key) {
				return true
			}
		}
		return false
	})
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	info, ok := readStat(pid)
	return ok && !info.dead
}
