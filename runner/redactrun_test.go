//go:build unix

package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
)

// TestResumeRestoresSecretInputs: a run continued from its record (whose
// inputs were redacted) gives its agents the secret from its environment.
func TestResumeRestoresSecretInputs(t *testing.T) {
	t.Setenv("TEST_RESUME_TOKEN", "tok-resume-0123456789")
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + "  inputs: {token: \"\"}\n  cues:\n    - {id: USE, agents: [use]}\n",
		"agents.yaml":  "agent: {id: use, run: '[ \"$ORCH_INPUT_TOKEN\" = tok-resume-0123456789 ]'}\n",
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, func(o *Options) {
		o.RunID = "resumed00001"
		o.Inputs = map[string]any{"token": "[redacted:TEST_RESUME_TOKEN]"}
		o.Resume = &record.RunRecord{ID: o.RunID, State: record.RunInterrupted, Cues: map[string]record.CueRecord{"USE": {State: record.CuePending}}}
	})
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
}

// TestSecretAcrossTheLineCut: a secret that straddles the 1 MiB cut of an
// output line is masked whole: the line is masked, then cut.
func TestSecretAcrossTheLineCut(t *testing.T) {
	const secret = "tok-straddle-0123456789abcdef"
	t.Setenv("TEST_CUT_TOKEN", secret)
	// The secret starts 10 bytes before the cut.
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + "  cues:\n    - {id: LONG, agents: [long]}\n",
		"agents.yaml":  "agent: {id: long, command: [sh, print.sh]}\n",
		"print.sh":     fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x; printf '%%s' \"$TEST_CUT_TOKEN\"; head -c 5000 /dev/zero | tr '\\0' y; echo\n", attempt.MaxLine-10),
	})
	rec := newMemRecorder()
	if res := runPlan(t, p, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	var line string
	for _, l := range rec.logs {
		if len(l.Text) > len(line) {
			line = l.Text
		}
	}
	if !strings.HasSuffix(line, driver.CutMarker) || len(line) != attempt.MaxLine+len(driver.CutMarker) {
		t.Fatalf("the long line was not cut at 1 MiB: %d bytes, ends %q", len(line), line[max(0, len(line)-40):])
	}
	if tail := line[attempt.MaxLine-40 : attempt.MaxLine]; strings.Contains(tail, secret[:9]) || !strings.Contains(tail, "[redacted") {
		t.Errorf("the line ends %q: the secret was cut before it was masked", tail)
	}
}
