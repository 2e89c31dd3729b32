//go:build unix

package runner

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestRedactor(t *testing.T) {
	pem := "-----BEGIN PRIVATE KEY-----\nQUJDREVGR0hJSktMTU5P\nd3h5ejAxMjM0NTY3\n-----END PRIVATE KEY-----"
	d := NewRedactor([]string{
		"API_TOKEN=tok-<&>-123456", "TLS_KEY=" + pem, "DB_URL=pg://u:pw@h", "SHORT_TOKEN=abc", "DEBUG_KEY=true",
		"HOME=/home/someone-long", "ORCH_SECRETS=DB_URL",
	}, nil)
	for in, want := range map[string]string{
		"auth tok-<&>-123456 ok":      "auth [redacted:API_TOKEN] ok",
		"connect pg://u:pw@h":         "connect [redacted:DB_URL]",
		"key: " + pem:                 "key: [redacted:TLS_KEY]",
		"d3h5ejAxMjM0NTY3":            "[redacted:TLS_KEY line 3]",   // a line logged alone
		"abc true /home/someone-long": "abc true /home/someone-long", // too short, or not secret
	} {
		if got := d.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	// In JSON, a secret is found however it is escaped; the result is valid JSON.
	raw, _ := json.Marshal(map[string]any{"pem": pem, "t": []any{"tok-<&>-123456"}, "n": 1})
	got := d.JSON(raw)
	if !json.Valid(got) || strings.Contains(string(got), "QUJD") || strings.Contains(string(got), "123456") {
		t.Errorf("JSON: %s", got)
	}
	// A continued run puts the recorded secrets back from its environment.
	inputs := map[string]any{"token": "tok-<&>-123456", "list": []any{"x pg://u:pw@h"}}
	var recorded map[string]any
	_ = json.Unmarshal(d.JSON(mustJSON(inputs)), &recorded)
	if recorded["token"] != "[redacted:API_TOKEN]" {
		t.Errorf("recorded %v", recorded)
	}
	if back := d.Restore(recorded); !reflect.DeepEqual(back, inputs) {
		t.Errorf("Restore: %v, want %v", back, inputs)
	}
}

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
		o.Resume = &RunRecord{ID: o.RunID, State: RunInterrupted, Cues: map[string]CueRecord{"USE": {State: CuePending}}}
	})
	if res.State != RunCompleted {
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
		"print.sh":     fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x; printf '%%s' \"$TEST_CUT_TOKEN\"; head -c 5000 /dev/zero | tr '\\0' y; echo\n", MaxLine-10),
	})
	rec := newMemRecorder()
	if res := runPlan(t, p, rec, nil); res.State != RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	var line string
	for _, l := range rec.logs {
		if len(l.Text) > len(line) {
			line = l.Text
		}
	}
	if !strings.HasSuffix(line, cutMarker) || len(line) != MaxLine+len(cutMarker) {
		t.Fatalf("the long line was not cut at 1 MiB: %d bytes, ends %q", len(line), line[max(0, len(line)-40):])
	}
	if tail := line[MaxLine-40 : MaxLine]; strings.Contains(tail, secret[:9]) || !strings.Contains(tail, "[redacted") {
		t.Errorf("the line ends %q: the secret was cut before it was masked", tail)
	}
}
