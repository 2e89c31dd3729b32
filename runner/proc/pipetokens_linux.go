package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// pipesTraced: a process's pipes can be read in /proc.
const pipesTraced = true

// pipeID names the pipe f is an end of as /proc/PID/fd does: "pipe:[INODE]".
func pipeID(f *os.File) string {
	var st syscall.Stat_t
	if f == nil || syscall.Fstat(int(f.Fd()), &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return ""
	}
	return "pipe:[" + strconv.FormatUint(st.Ino, 10) + "]"
}

// heldPipes lists the pipes process pid has open.
func heldPipes(pid int) []string {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if link, err := os.Readlink(dir + e.Name()); err == nil && strings.HasPrefix(link, "pipe:[") {
			out = append(out, link)
		}
	}
	return out
}
