//go:build unix

package control

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/testfs"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

const retryCuelist = `cuelist:
  id: r
  cues:
    - {id: A, agents: [a]}
    - {id: B, agents: [b], dependencies: [A]}
    - {id: C, agents: [b], dependencies: [B], idempotent: false}
    - {id: D, agents: [a]}
---
agent: {id: a, command: ["true"], fallback: [spare]}
---
agent: {id: spare, command: ["true"]}
---
agent: {id: b, command: ["true"]}
`

func compileRetryPlan(t *testing.T, text string) *planner.Plan {
	t.Helper()
	dir := testfs.Write(t, map[string]string{"cuelist.yaml": text}, 0o644)
	_, p, diags, err := planner.Compile(filepath.Join(dir, "cuelist.yaml"), "", spec.LoadOptions{})
	if err != nil || p == nil {
		t.Fatalf("compile: %v %v", err, diags)
	}
	return p
}

func retryRecord(states map[string]record.CueState) *record.RunRecord {
	rec := &record.RunRecord{ID: "abc", State: record.RunInterrupted, Cues: map[string]record.CueRecord{}}
	for id, s := range states {
		rec.Cues[id] = record.CueRecord{State: s, Attempts: 2, AgentAttempts: map[string]int{"b": 2}}
	}
	return rec
}

// An interrupted run: the failed cue runs again (its attempt numbers go on,
// its agent's tries start over), a non-idempotent cue in GO waits for orch go
// unless named, a pending one runs as resume runs it; a run with no
// fingerprints takes its completed cues as unchanged and says so.
func TestPlanRetryInterruptedRun(t *testing.T) {
	p := compileRetryPlan(t, retryCuelist)
	rec := retryRecord(map[string]record.CueState{"A": record.CueCompleted, "B": record.CueFailed, "C": record.CueGo, "D": record.CuePending})
	now := cueSpecHashes(p)
	rp, err := planRetry(rec, p, now, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range rp.verdicts {
		got[v.id] = v.action()
	}
	want := map[string]string{"A": "keep", "B": "run", "C": "continue", "D": "continue"}
	for id, a := range want {
		if got[id] != a {
			t.Errorf("%s: %s, want %s", id, got[id], a)
		}
	}
	b := rp.record(rec).Cues["B"]
	if b.State != record.CuePending || b.Attempts != 2 || b.AgentAttempts["b"] != 0 {
		t.Errorf("B as the runner gets it: %+v", b)
	}
	shown := rp.public(rec)
	if why := shown.Cues[2].Why; !strings.Contains(why, "waits for orch go abc C (or --rerun C)") {
		t.Errorf("the dry run does not say C waits for orch go: %s", why)
	}
	if !shown.Unknown || shown.Kept == 0 { // the dry run says completed cues are taken as unchanged
		t.Errorf("the dry run does not say the definitions are unknown: %+v", shown)
	}
	// Named, the cue in GO runs again.
	if rp, _ = planRetry(rec, p, now, nil, []string{"C"}, ""); rp.verdicts[2].action() != "run" {
		t.Errorf("--rerun C: %s", rp.verdicts[2].action())
	}
}

// A cue's fingerprint covers its entry and its agents' specs, fallbacks
// included, and nothing else: changing agent b changes B and C, not A or D;
// changing the fallback of a changes A and D.
func TestCueSpecHashes(t *testing.T) {
	before := cueSpecHashes(compileRetryPlan(t, retryCuelist))
	changedB := cueSpecHashes(compileRetryPlan(t, strings.Replace(retryCuelist, `{id: b, command: ["true"]}`, `{id: b, command: ["false"]}`, 1)))
	changedSpare := cueSpecHashes(compileRetryPlan(t, strings.Replace(retryCuelist, `{id: spare, command: ["true"]}`, `{id: spare, command: ["false"]}`, 1)))
	for id, changed := range map[string]bool{"A": false, "B": true, "C": true, "D": false} {
		if (before[id] != changedB[id]) != changed {
			t.Errorf("agent b changed: cue %s changed=%v", id, !changed)
		}
	}
	for id, changed := range map[string]bool{"A": true, "B": false, "C": false, "D": true} {
		if (before[id] != changedSpare[id]) != changed {
			t.Errorf("fallback spare changed: cue %s changed=%v", id, !changed)
		}
	}
}

// A cuelist whose cues were added or removed is not the run's any more.
func TestPlanRetryRefusesOtherCues(t *testing.T) {
	p := compileRetryPlan(t, retryCuelist)
	rec := retryRecord(map[string]record.CueState{"A": record.CueCompleted, "B": record.CueFailed, "C": record.CueBlocked, "OLD": record.CueFailed})
	_, err := planRetry(rec, p, nil, nil, nil, "")
	if err == nil || !strings.Contains(err.Error(), "added D; removed OLD") {
		t.Errorf("got %v", err)
	}
}
