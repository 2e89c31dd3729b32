//go:build unix

package proc

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
)

// TestKillTokenedByTheTokenOnly: KillTokened kills the processes whose
// ORCH_ATTEMPT_TOKEN starts with the prefix, and not one that only holds
// the same text in another variable (a copy of an outer token kept under
// another name, a note naming it): on Linux the match was anywhere in the
// environment, so those were killed too.
func TestKillTokenedByTheTokenOnly(t *testing.T) {
	prefix := "r-kill-" + strconv.Itoa(os.Getpid()) + "/cue/A/1/"
	start := func(env string) int {
		c := exec.Command("sleep", "60")
		c.Env = append(os.Environ(), env)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c.Process.Pid
	}
	tokened := start("ORCH_ATTEMPT_TOKEN=" + prefix + "try1")
	saved := start("SAVED_ORCH_ATTEMPT_TOKEN=" + prefix + "try1")
	noted := start("NOTE=ran with ORCH_ATTEMPT_TOKEN=" + prefix + "try1")
	killed := KillTokened(prefix)
	if !slices.Contains(killed, tokened) {
		t.Errorf("the process with the attempt's token was not killed (killed %v)", killed)
	}
	if slices.Contains(killed, saved) || slices.Contains(killed, noted) {
		t.Errorf("a process holding the token's text in another variable was killed (killed %v; SAVED_ORCH_ATTEMPT_TOKEN %d, NOTE %d)", killed, saved, noted)
	}
}
