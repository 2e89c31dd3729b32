//go:build temporal_e2e && linux

package temporal

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A jsonl lead on one worker hands off to a helper and spawns another,
// which run on the other worker (the helper is placed on its queue): the
// handoff's result and the spawn's announcement come back through the
// workflow, the tree is in orch status, and orch events shows the
// protocol messages of every task.
func TestTemporalHandoffs(t *testing.T) {
	p := startCollab(t, "children", "helper.yaml")
	if out, code := p.run("run", "--engine", "temporal", "--db", p.db, filepath.Join("children", "cuelist.yaml")); code != 0 {
		t.Fatalf("orch run --engine temporal: exit %d\n%s", code, out)
	}
	id := runID(t, p.run, p.db)
	lead := outputsOf(t, p, id, "LEAD-100")
	handoff, _ := lead["handoff"].(map[string]any)
	announced, _ := lead["announced"].(map[string]any)
	if handoff["answer"] != "RIVERS" || announced["answer"] != "MAPS" || lead["spawned"] != "LEAD-100/2" {
		t.Errorf("LEAD-100's outputs: %v", lead)
	}
	tree, _ := p.run("status", "--db", p.db, id)
	for _, want := range []string{"LEAD-100/1", "LEAD-100/2"} {
		if !strings.Contains(tree, want) {
			t.Errorf("no %s in orch status:\n%s", want, tree)
		}
	}
	ev, _ := p.run("events", "--db", p.db, id, "--output", "json")
	for _, want := range []string{`"message_type":"task.handoff"`, `"message_type":"handoff.result"`, `"message_type":"task.spawn"`,
		`"message_type":"spawn.accepted"`, `"message_type":"task.announce"`, `"type":"task/started"`} {
		if !strings.Contains(ev, want) {
			t.Errorf("no %s in orch events", want)
		}
	}
	if t.Failed() {
		t.Logf("orch events:\n%s", ev)
	}
}

// A jsonl agent on one worker broadcasts to one at work on the other, lists
// the tasks at work and tells the person; orch events shows it all.
func TestTemporalBroadcast(t *testing.T) {
	p := startCollab(t, "people", "hearer.yaml")
	if out, code := p.run("run", "--engine", "temporal", "--db", p.db, filepath.Join("people", "cuelist.yaml")); code != 0 {
		t.Fatalf("orch run --engine temporal: exit %d\n%s", code, out)
	}
	id := runID(t, p.run, p.db)
	ev, _ := p.run("events", "--db", p.db, id)
	evJSON, _ := p.run("events", "--db", p.db, id, "--output", "json")
	for _, want := range []string{`"message_type":"broadcast.send"`, `"message_type":"broadcast.notice"`, `"message_type":"agents.list"`,
		`"message_type":"escalation.error"`, `[redacted:PEOPLE_API_TOKEN]`} {
		if !strings.Contains(evJSON, want) {
			t.Errorf("no %s in orch events --output json", want)
		}
	}
	if strings.Contains(evJSON, "tok-people-1234") {
		t.Errorf("the secret is in orch events")
	}
	for _, want := range []string{"all hands", "disk almost full"} {
		if !strings.Contains(ev, want) {
			t.Errorf("no %q in orch events:\n%s", want, ev)
		}
	}
	if hear := outputsOf(t, p, id, "HEAR-100"); fmt.Sprint(hear["heard"]) != "map[text:all hands]" || hear["from"] != "talker" {
		t.Errorf("HEAR-100 did not hear the broadcast: %v", hear)
	}
}

// outputsOf is a cue's outputs, as orch status shows them.
func outputsOf(t *testing.T, p collabRun, id, cue string) map[string]any {
	t.Helper()
	out, _ := p.run("status", "--db", p.db, id, "--output", "json")
	var st struct {
		Cues []struct {
			ID      string
			Outputs map[string]any
		}
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("orch status %s: %v\n%s", id, err, out)
	}
	for _, c := range st.Cues {
		if c.ID == cue {
			return c.Outputs
		}
	}
	t.Fatalf("no cue %s in orch status:\n%s", cue, out)
	return nil
}
