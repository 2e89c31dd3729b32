package runner

import (
	"os/exec"
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
