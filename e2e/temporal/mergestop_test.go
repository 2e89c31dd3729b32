//go:build temporal_e2e && linux

package temporal

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTemporalStopEndsMergeVerify: C's merge runs a verify command that
// would take five minutes; orch stop ends the run, and the verify command
// on the worker is stopped too (the cancel reaches the merge's activity),
// not left running to its end, and the merge's branch is not pushed.
func TestTemporalStopEndsMergeVerify(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "verify.pid")
	s := newWorktreeSetup(t, map[string]string{
		"fanin.yaml": fanInOnQueues("{on_conflict: fail, verify: [sh, -c, 'echo $$ > "+pidFile+"; sleep 300']}",
			"echo a > a.txt", "echo b > b.txt", "echo c > c.txt"),
	})
	if out, code := s.run("run", "--engine", "temporal", "--detach", "--db", s.db, "--git-remote", s.remote, "fanin.yaml"); code != 0 {
		t.Fatalf("orch run --detach: exit %d\n%s", code, out)
	}
	id := runID(t, s.run, s.db)
	pid := 0
	eventually(t, "the verify command of C's merge did not start", func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	if out, code := s.run("stop", "--db", s.db, id); code != 0 {
		t.Fatalf("orch stop %s: exit %d\n%s", id, code, out)
	}
	// The cancel reaches the worker with a heartbeat's answer: within a
	// minute at the most, far less than the command's five.
	deadline := time.Now().Add(2 * time.Minute)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the verify command (pid %d) still runs 2 minutes after orch stop", pid)
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.notIn(s.remote, "orch/"+id+"/C/merge")
}

// zombie says whether pid has exited, not yet reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}
