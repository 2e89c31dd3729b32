//go:build unix

package store

import "syscall"

// processExists reports whether a process with this pid exists (signal 0
// checks without sending anything).
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }
