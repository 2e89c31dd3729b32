package temporal

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/proc"
)

// testRunID is the id of a test's run: name, then this test process's id.
// A worker kills an attempt's leftover processes by their attempt token
// (proc.KillTokened, when an activity is dispatched again), which starts
// with the run id, across the machine: two copies of this package's tests
// at once (go test in two checkouts) must not share run ids, or one kills
// the other's agents.
func testRunID(name string) string { return fmt.Sprintf("%s-p%d", name, os.Getpid()) }

// r1 is the run of the tests that check its branches and worktrees by name.
var r1 = testRunID("r1")

// peerRunIDVar makes TestTwoTestProcessesKeepTheirAgents's copy of the test
// binary print its run id and end.
const peerRunIDVar = "ORCH_TEMPORAL_TEST_PEER_RUN"

// TestTwoTestProcessesKeepTheirAgents: another copy of this package's
// tests runs its run "r5" (TestWorkerLostGoRunsAgain's) at the same time;
// its agent of CUE-100's attempt 1 is running when this copy's GO of the
// same cue and attempt is dispatched again (the worker-lost test) and kills
// the attempt's leftover processes. The other copy's agent survives.
func TestTwoTestProcessesKeepTheirAgents(t *testing.T) {
	if name := os.Getenv(peerRunIDVar); name != "" {
		fmt.Println(testRunID(name))
		return
	}
	if runtime.GOOS == "windows" {
		t.Skip("no agents run on Windows")
	}
	peer := exec.Command(os.Args[0], "-test.run=^TestTwoTestProcessesKeepTheirAgents$")
	peer.Env = append(os.Environ(), peerRunIDVar+"=r5")
	out, err := peer.Output()
	if err != nil {
		t.Fatalf("the other test process: %v", err)
	}
	peerRun, _, _ := strings.Cut(string(out), "\n") // then its PASS
	if peerRun == testRunID("r5") {
		t.Fatalf("both test processes run %q", peerRun)
	}
	theirs := agentWithToken(t, attemptTokens(AttemptInput{RunID: peerRun, Cue: "CUE-100", Attempt: 1})+"try1")
	ours := agentWithToken(t, attemptTokens(AttemptInput{RunID: testRunID("r5"), Cue: "CUE-100", Attempt: 1})+"try1")
	killed := proc.KillTokened(attemptTokens(AttemptInput{RunID: testRunID("r5"), Cue: "CUE-100", Attempt: 1}))
	if slices.Contains(killed, theirs) {
		t.Errorf("the re-dispatched GO of run %s killed the agent of run %s (the other test process's)", testRunID("r5"), peerRun)
	}
	if !slices.Contains(killed, ours) {
		t.Errorf("the re-dispatched GO did not kill its own attempt's leftover agent (pid %d); killed %v", ours, killed)
	}
}

// agentWithToken starts a process that carries token as its attempt token,
// killed at the test's end, and returns its pid.
func agentWithToken(t *testing.T, token string) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), "ORCH_ATTEMPT_TOKEN="+token)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}
