//go:build temporal_e2e && linux

package temporal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemporalCollab runs a jsonl agent on Temporal with nobody following
// the run (orch run --detach): it writes the blackboard (a fenced write, a
// conflict), reads it back and asks the person; the question is answered
// with orch answer, the answer reaches the agent on its worker, and a cue
// on another worker (another task queue) reads what it wrote.
func TestTemporalCollab(t *testing.T) {
	p := startCollab(t, "collab", "reader.yaml")
	run, db, mark := p.run, p.db, p.mark
	if out, code := run("run", "--engine", "temporal", "--detach", "--db", db, filepath.Join("collab", "cuelist.yaml")); code != 0 {
		t.Fatalf("orch run --detach: exit %d\n%s", code, out)
	}
	id := runID(t, run, db)

	// The question is open once the store, brought up to date, says so.
	eventually(t, "no open question q1 in orch status", func() bool {
		if _, err := os.Stat(mark); err != nil {
			return false
		}
		if out, code := p.temporal("sync", "--db", db, id); code != 0 {
			t.Logf("orch sync: exit %d\n%s", code, out)
			return false
		}
		return openQuestion(t, run, db, id) == "Which shade of green?"
	})
	if out, code := run("answer", "--db", db, id, "q1", "navy"); code != 0 {
		t.Fatalf("orch answer %s q1: exit %d\n%s", id, code, out)
	}
	if out, code := run("resume", "--db", db, id); code != 0 {
		ev, _ := run("events", "--db", db, id)
		t.Fatalf("orch resume %s: exit %d\n%s\n%s", id, code, out, ev)
	}
	var st struct {
		State string
		Cues  []struct {
			ID      string
			Outputs map[string]any
		}
	}
	out, _ := run("status", "--db", db, id, "--output", "json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("orch status %s: %v\n%s", id, err, out)
	}
	outputs := map[string]map[string]any{}
	for _, c := range st.Cues {
		outputs[c.ID] = c.Outputs
	}
	if st.State != "completed" || outputs["ASK-100"]["answer"] != "navy" || outputs["ASK-100"]["conflict"] != "at 2 by collab-agent" ||
		outputs["ASK-100"]["v2"] != 2.0 || outputs["READ-200"]["seen"] != "navy" {
		t.Fatalf("orch status %s:\n%s", id, out)
	}
	ev, _ := run("events", "--db", db, id)
	for _, want := range []string{"collab-agent (ASK-100) asks person: Which shade of green?", "q1 answered by person: navy",
		"blackboard color = version 2 by collab-agent", "blackboard color not written by collab-agent: expected version 0, it is at 2",
		"collab-agent reports: working 50% (asked the person)", "blackboard answer = version 1 by collab-agent"} {
		if !strings.Contains(ev, want) {
			t.Errorf("no %q in orch events:\n%s", want, ev)
		}
	}
}

// openQuestion is the text of the run's first open question, "" when none.
func openQuestion(t *testing.T, run orchRunner, db, id string) string {
	t.Helper()
	var st struct {
		Questions []struct {
			ID, Question, State string
		}
	}
	out, code := run("status", "--db", db, id, "--output", "json")
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		return ""
	}
	for _, q := range st.Questions {
		if q.State == "open" {
			return q.Question
		}
	}
	return ""
}

// TestTemporalMessages: two jsonl agents at work side by side on two
// workers (two task queues); one's message.send reaches the other through
// the workflow (the recipient's worker long-polls its inbox), and the
// person sees the message in orch events.
func TestTemporalMessages(t *testing.T) {
	p := startCollab(t, "messages", "receiver.yaml")
	if out, code := p.run("run", "--engine", "temporal", "--db", p.db, filepath.Join("messages", "cuelist.yaml")); code != 0 {
		t.Fatalf("orch run --engine temporal: exit %d\n%s", code, out)
	}
	id := runID(t, p.run, p.db)
	var st struct {
		Cues []struct {
			ID      string
			Outputs map[string]any
		}
	}
	out, _ := p.run("status", "--db", p.db, id, "--output", "json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("orch status %s: %v\n%s", id, err, out)
	}
	var got any
	for _, c := range st.Cues {
		if c.ID == "RECV-100" {
			got = c.Outputs["got"]
		}
	}
	if got != "hello from the sender" {
		t.Errorf("RECV-100 got %v:\n%s", got, out)
	}
	if ev, _ := p.run("events", "--db", p.db, id); !strings.Contains(ev, `msg-sender sent msg-receiver a message: {"text":"hello from the sender"}`) {
		t.Errorf("no message in orch events:\n%s", ev)
	}
}

// collabRun is a project of engine/temporal/testdata served by two workers:
// one on the default queue, one on "other", which the agent of placed
// (a file under agents/) is placed on.
type collabRun struct {
	run, temporal orchRunner
	db, mark      string
}

func startCollab(t *testing.T, name, placed string) collabRun {
	t.Helper()
	root := repoRoot(t)
	tmp := t.TempDir()
	orch := buildOrch(t, root, tmp)
	server := startDevServer(t, root, tmp)
	proj := filepath.Join(tmp, name+"-proj")
	if err := os.CopyFS(filepath.Join(proj, name), os.DirFS(filepath.Join(root, "engine", "temporal", "testdata", name))); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(proj, name, "agents", placed)
	src, err := os.ReadFile(agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent, append(src, "  placement: {queue: other}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(tmp, "asked")
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+server.addr,
		"PATH="+filepath.Dir(orch)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ORCH_ENGINE=", "ORCH_DB=",
		"COLLAB_LIB="+filepath.Join(root, "examples", "lib"), "COLLAB_MARK="+mark)
	startProc(t, tmp, "worker-orch", env, proj, orch, "worker", "--root", proj)
	startProc(t, tmp, "worker-other", env, proj, orch, "worker", "--root", proj, "--queue", "other")
	return collabRun{run: orchIn(t, orch, proj, env), temporal: orchIn(t, filepath.Join(filepath.Dir(orch), "orch-temporal"), proj, env),
		db: filepath.Join(tmp, name+".db"), mark: mark}
}
