//go:build temporal_e2e && linux

package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// TestTemporalSecretsMasked: on two workers, an agent writes a secret of
// the workers' environment (a name that says so) and one the cuelist
// declares to its outputs, the blackboard, a status report, a note to the
// person, a broadcast and a handoff context; its downstream cue runs on the
// other worker, with the token as a run input too (orch run --set). The
// agents that receive them get the real values; the workflow's history as
// the Temporal server keeps it (every event, its payloads as sent), orch
// status, orch events and orch bb get hold [redacted:NAME], never a value.
func TestTemporalSecretsMasked(t *testing.T) {
	const token, phrase = "tok-e2e-secret-7171", "open-sesame-e2e"
	t.Setenv("SECRETS_TEST_TOKEN", token)
	t.Setenv("DEPLOY_PHRASE", phrase)
	p := startCollab(t, "secrets", "user.yaml")
	if out, code := p.run("run", "--engine", "temporal", "--db", p.db, "--set", "run_token="+token, filepath.Join("secrets", "cuelist.yaml")); code != 0 {
		ev, _ := p.run("events", "--db", p.db, "last")
		t.Fatalf("orch run --engine temporal: exit %d\n%s\n%s", code, out, ev)
	}
	id := runID(t, p.run, p.db)
	for cue, keys := range map[string][]string{"LEAK-100": {"handoff_real"}, "HEAR-100": {"real"}, "USE-100": {"inputs_real", "board_real", "snapshot_real", "run_input_real"}} {
		out := outputsOf(t, p, id, cue)
		for _, k := range keys {
			if out[k] != true {
				t.Errorf("%s: %s is %v, want true (outputs %v)", cue, k, out[k], out)
			}
		}
	}
	status, _ := p.run("status", "--db", p.db, id, "--output", "json")
	events, _ := p.run("events", "--db", p.db, id)
	eventsJSON, _ := p.run("events", "--db", p.db, id, "--output", "json")
	board, _ := p.run("bb", "get", "--db", p.db, "--run", id, "--output", "json", "creds")
	history := workflowHistory(t, eventsJSON)
	for what, text := range map[string]string{"orch status": status, "orch events": events, "orch events --output json": eventsJSON,
		"orch bb get": board, "the workflow's history": history} {
		for _, secret := range []string{token, phrase, "key-in-the-spec-5555"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds the secret %q", what, secret)
			}
		}
	}
	for _, want := range []string{"[redacted:SECRETS_TEST_TOKEN]", "[redacted:DEPLOY_PHRASE]", "[redacted:RECEIVER_API_KEY]"} {
		if !strings.Contains(history, want) {
			t.Errorf("no %s in the workflow's history", want)
		}
	}
	for _, want := range []string{"using [redacted:SECRETS_TEST_TOKEN]", "deploying with [redacted:DEPLOY_PHRASE]"} {
		if !strings.Contains(eventsJSON, want) {
			t.Errorf("no %q in orch events --output json", want)
		}
	}
	if !strings.Contains(board, "[redacted:DEPLOY_PHRASE]") {
		t.Errorf("orch bb get creds: %s", board)
	}
}

// workflowHistory is every event of the run's workflow as the server keeps
// it, each in its wire form (a payload's JSON is in it as sent), one a
// line. The server's address and the workflow are the run's, from its
// run.started event.
func workflowHistory(t *testing.T, eventsJSON string) string {
	t.Helper()
	var first struct { // orch events --output json: one event a line, run.started first
		Type string
		Data struct {
			Temporal struct {
				Address    string `json:"address"`
				Namespace  string `json:"namespace"`
				WorkflowID string `json:"workflow_id"`
			} `json:"temporal"`
		}
	}
	line, _, _ := strings.Cut(eventsJSON, "\n")
	if err := json.Unmarshal([]byte(line), &first); err != nil || first.Data.Temporal.WorkflowID == "" {
		t.Fatalf("no run.started with the workflow in orch events --output json (%v):\n%.2000s", err, eventsJSON)
	}
	w := first.Data.Temporal
	c, err := client.Dial(client.Options{HostPort: w.Address, Namespace: w.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var b bytes.Buffer
	it := c.GetWorkflowHistory(ctx, w.WorkflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.String()
}
