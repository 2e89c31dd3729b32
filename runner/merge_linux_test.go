package runner

import (
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// A verify command whose work goes on in a process it orphaned (a pyenv
// shim, a daemonising tool) is the merge's while the command runs: the
// run's sweeps, which kill an orphan whose attempt is over, spare it.
func TestMergeVerifyOrphanSpared(t *testing.T) {
	_, run := mergeProject(t, "echo a > a.txt", "echo b > b.txt",
		`      merge: {on_conflict: fail, verify: [sh, -c, '(sh -c "sleep 1.5; touch verified" &); i=0; while [ ! -e verified ] && [ $i -lt 60 ]; do sleep 0.1; i=$((i+1)); done; test -e verified']}`, "")
	res, rec := run(t, nil)
	wantStates(t, rec, map[string]string{"C": "completed"})
	if res.State != record.RunCompleted {
		t.Errorf("run %s: %s", res.State, res.Reason)
	}
}
