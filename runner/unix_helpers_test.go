//go:build unix

package runner

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// zombie reports whether pid has exited and waits to be collected by its
// parent (or is gone): it is dead, though signal 0 still reaches it.
func zombie(pid int) bool {
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(b), ") Z ")
	}
	out, err := exec.Command("ps", "-o", "stat=", "-p", itoa(pid)).Output()
	return err != nil || strings.HasPrefix(strings.TrimSpace(string(out)), "Z")
}

// needSetsid skips a test whose agent leaves its process group with the
// setsid command: Linux has it (util-linux); macOS does not by default.
func needSetsid(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skipf("needs the setsid command (%v)", err)
	}
}
