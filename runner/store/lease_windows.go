package store

import "os"

// processExists reports whether a process with this pid exists: on
// Windows, FindProcess opens it and fails when there is none.
func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
