package proc

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestHasChildren: the run's last sweep skips /proc when orch has no child;
// a child that runs, or has exited and is not reaped yet, is seen, and
// looking does not reap it (its Wait still gets its status).
func TestHasChildren(t *testing.T) {
	c := exec.Command("/bin/sh", "-c", "exit 3")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // exited, a zombie until Wait
	if !hasChildren() {
		t.Error("a child that exited and is not reaped was not seen")
	}
	if err := c.Wait(); c.ProcessState == nil || c.ProcessState.ExitCode() != 3 {
		t.Errorf("Wait after hasChildren: %v (the status was taken)", err)
	}
}

// TestKillTreesBeatsForks: a process that forks without pause is killed with
// every child it made: each is stopped before anything is killed, so none
// is born after the look that would have found it.
func TestKillTreesBeatsForks(t *testing.T) {
	BecomeSubreaper() // the children of the killed forker come back to us
	mark := "ORCH_KILLTREES_TEST=" + strconv.Itoa(os.Getpid())
	c := exec.Command("/bin/sh", "-c", "while :; do sleep 7777 & sh -c 'sleep 7777 & exit' & done")
	c.Env = append(os.Environ(), mark)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as agents are: else not taken for one's
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	got := killTrees([]int{c.Process.Pid})
	_ = c.Wait()
	if len(got[c.Process.Pid]) < 2 || got[c.Process.Pid][0] != c.Process.Pid {
		t.Errorf("killTrees reported %v", got)
	}
	// What reparented to us meanwhile was no longer in the tree: the
	// sweeper's next round finds those; here nothing of the forker's own
	// tree is left, and what came back to us is killed too.
	for round := 0; round < 20; round++ {
		var left []int
		for pid := range orphans() {
			left = append(left, pid)
		}
		if len(left) == 0 {
			break
		}
		killTrees(left)
	}
	time.Sleep(50 * time.Millisecond)
	for pid, info := range readProcTable() {
		env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if !info.dead && bytes.Contains(env, []byte(mark)) {
			t.Errorf("pid %d of the forker is alive", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
