//go:build unix

package serve

import "syscall"

// maxServeConns is how many connections orch serve keeps open at most:
// 4096, fewer when its file limit is low (the database and the process
// need some of its descriptors).
func maxServeConns() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < 4096+256 {
		return max(int(lim.Cur)-256, 64)
	}
	return 4096
}
