package store

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// walWriteLock is the byte of the -shm file whose lock is SQLite's WAL
// write lock (UNIX_SHM_BASE, slot 0, in SQLite's unix VFS).
const walWriteLock = 120

// lockHolder is the pid of the process that holds the database's write
// lock, 0 when none or not known. It reads /proc/locks rather than asking
// fcntl(F_GETLK): that needs a descriptor of the -shm file, and closing one
// would drop every lock this process's SQLite holds on it.
func lockHolder(path string) int {
	var st unix.Stat_t
	if err := unix.Stat(path+"-shm", &st); err != nil {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	file := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	ino := fmt.Sprintf(":%d", st.Ino)
	sameInode := 0 // a holder of the same inode on a device numbered otherwise (overlayfs)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 1: POSIX  ADVISORY  WRITE 31753 00:2d:1234 120 120
		// (a waiter's line has "->" after the number: it holds nothing)
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[1] == "->" || fields[3] != "WRITE" || !strings.HasSuffix(fields[5], ino) {
			continue
		}
		start, err1 := strconv.ParseInt(fields[6], 10, 64)
		end, err2 := strconv.ParseInt(fields[7], 10, 64)
		if fields[7] == "EOF" {
			end, err2 = 1<<62, nil
		}
		pid, err3 := strconv.Atoi(fields[4])
		if err1 != nil || err2 != nil || err3 != nil || start > walWriteLock || walWriteLock > end || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if fields[5] == file {
			return pid
		}
		sameInode = pid
	}
	return sameInode
}
