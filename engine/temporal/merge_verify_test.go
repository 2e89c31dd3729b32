//go:build linux

package temporal

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/gitwork"
)

// A verify command on a worker that leaves a process behind (a server it
// started in the background) does not leave it running on the worker: the
// verify command's process group is swept, as locally.
func TestMergeVerifyLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	in := MergeInput{RunID: r1, Cue: "join", Timeout: time.Minute,
		Verify: []string{"sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $! > " + pidFile}}
	tree := gitwork.NewMergeTree(dir, dir, in.RunID, 1, in.Cue, "orch/"+r1+"/result")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := verifyMerge(ctx, in, tree, dir)
	if err != nil || p != nil {
		t.Fatalf("verify: problem %+v, err %v", p, err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The sweep sends SIGTERM, then SIGKILL after the grace period: the
	// process is gone (or a zombie for its new parent to reap) by then.
	deadline := time.Now().Add(30 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the verify command's background process %d still runs after it ended", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running says whether pid is a process that has not exited (a zombie has).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// What a failing verify command prints is masked on the worker before it
// goes into the history and the run's records (the problem's output, the
// merge's note): a secret of the worker's environment does not leak, nor
// one the plan declares (a name that does not look like one: the merge
// activity is given the plan's secret names).
func TestMergeVerifyOutputMasked(t *testing.T) {
	const secret, phrase = "s3cr3t-verify-value-9f2c", "open-sesame-verify-42"
	t.Setenv("ORCH_TEST_API_KEY", secret)
	t.Setenv("DEPLOY_PHRASE", phrase)
	dir := t.TempDir()
	in := MergeInput{RunID: r1, Cue: "join", Timeout: time.Minute, Secrets: []string{"DEPLOY_PHRASE"},
		Verify: []string{"sh", "-c", "echo token is $ORCH_TEST_API_KEY; echo phrase is $DEPLOY_PHRASE; exit 1"}}
	tree := gitwork.NewMergeTree(dir, dir, in.RunID, 1, in.Cue, "orch/"+r1+"/result")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := verifyMerge(ctx, in, tree, dir)
	if err != nil || p == nil {
		t.Fatalf("verify: problem %+v, err %v; want a problem", p, err)
	}
	if strings.Contains(p.Output, secret) || !strings.Contains(p.Output, "token is [redacted:ORCH_TEST_API_KEY]") ||
		strings.Contains(p.Output, phrase) || !strings.Contains(p.Output, "phrase is [redacted:DEPLOY_PHRASE]") {
		t.Errorf("the verify command's output as recorded: %q", p.Output)
	}
}
