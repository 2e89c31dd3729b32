//go:build unix

package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/protocols/agent"
	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/record"
)

// versionedBoard is an attempt's blackboard tools as a worker serves them:
// versions, the store's conflict rule, the attempt's agent as the author.
type versionedBoard struct {
	mcpbridge.Task
	mu     sync.Mutex
	agent  string
	values map[string]protocols.BlackboardValue
}

func (*versionedBoard) Denied(string) string   { return "" }
func (*versionedBoard) Refused(string, string) {}
func (b *versionedBoard) BlackboardWrite(_ context.Context, w protocols.BlackboardWrite) (protocols.BlackboardAck, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.values[w.Key]
	if (record.BlackboardPut{IfVersion: w.ExpectedVersion}).Conflicts(cur.Version) {
		return protocols.BlackboardAck{}, &agent.ConflictError{Key: w.Key, Expected: *w.ExpectedVersion, CurrentVersion: cur.Version, Author: cur.Author}
	}
	b.values[w.Key] = protocols.BlackboardValue{Key: w.Key, Found: true, Value: w.Value, Version: cur.Version + 1, Author: b.agent}
	return protocols.BlackboardAck{Key: w.Key, Version: cur.Version + 1}, nil
}
func (b *versionedBoard) BlackboardRead(_ context.Context, r protocols.BlackboardRead) (protocols.BlackboardValue, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.values[r.Key]
	if !ok {
		return protocols.BlackboardValue{Key: r.Key}, nil
	}
	return v, nil
}
func (b *versionedBoard) BlackboardList(_ context.Context, prefix string) ([]mcpbridge.BoardKey, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var keys []mcpbridge.BoardKey
	for k, v := range b.values {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, mcpbridge.BoardKey{Key: k, Version: v.Version, Author: v.Author})
		}
	}
	return keys, nil
}

// inTemporalAgent sets the environment a worker gives an agent: no
// database, the attempt's endpoint.
func inTemporalAgent(t *testing.T, url, token string) {
	t.Setenv("ORCH_ENGINE", "temporal")
	t.Setenv("ORCH_DB", "")
	t.Setenv("ORCH_RUN_ID", "r-worker")
	t.Setenv("ORCH_AGENT_ID", "coder")
	t.Setenv(mcpbridge.URLVar, url)
	t.Setenv(mcpbridge.TokenVar, token)
}

// orch bb set, get and ls inside an agent on a Temporal worker: no
// database there, so they go to the attempt's endpoint (the worker's, which
// hands them to the run's workflow), with versions and conflicts as ever.
func TestBBInsideATemporalAgent(t *testing.T) {
	e, err := mcpbridge.Start(mcpbridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	board := &versionedBoard{agent: "coder", values: map[string]protocols.BlackboardValue{}}
	token, unregister := e.Register("build/1", board)
	inTemporalAgent(t, e.URL(), token)
	dir := t.TempDir() // no .orch/ here or above: only the endpoint can answer

	if code, out, stderr := runOrch(t, dir, "bb", "set", "plan", `{"steps": 3}`); code != 0 || out != "plan: version 1\n" {
		t.Fatalf("orch bb set: exit %d, %q %q", code, out, stderr)
	}
	if code, out, stderr := runOrch(t, dir, "bb", "set", "--string", "--output", "json", "note", "42"); code != 0 || !strings.Contains(out, `"version": 1`) {
		t.Fatalf("orch bb set --string: exit %d, %q %q", code, out, stderr)
	}
	if got := board.values["note"].Value; got != "42" {
		t.Errorf("--string stored %#v", got)
	}
	if code, out, stderr := runOrch(t, dir, "bb", "get", "plan"); code != 0 || out != `{"steps":3}`+"\n" {
		t.Errorf("orch bb get: exit %d, %q %q", code, out, stderr)
	}
	code, out, _ := runOrch(t, dir, "bb", "get", "--run", "r-worker", "--output", "json", "plan")
	var e1 struct {
		Key, Author string
		Version     int64
		Value       map[string]any
	}
	if code != 0 || json.Unmarshal([]byte(out), &e1) != nil || e1.Author != "coder" || e1.Version != 1 || e1.Value["steps"] != 3.0 {
		t.Errorf("orch bb get --output json: exit %d, %q", code, out)
	}
	if code, _, stderr := runOrch(t, dir, "bb", "get", "absent"); code != 1 || !strings.Contains(stderr, `run r-worker has no blackboard key "absent"`) {
		t.Errorf("orch bb get of a key the board lacks: exit %d, %q", code, stderr)
	}
	if code, out, stderr := runOrch(t, dir, "bb", "set", "--if-version", "1", "plan", `{"steps": 4}`); code != 0 || out != "plan: version 2\n" {
		t.Errorf("orch bb set --if-version 1: exit %d, %q %q", code, out, stderr)
	}
	code, out, stderr := runOrch(t, dir, "bb", "set", "--if-version", "1", "plan", `{"steps": 5}`)
	if code != 1 || out != "" || !strings.Contains(stderr, `blackboard key "plan" is at version 2 (by coder), not 1: not written`) {
		t.Errorf("a conflicting orch bb set: exit %d, %q %q", code, out, stderr)
	}
	if code, out, _ := runOrch(t, dir, "bb", "ls"); code != 0 || !strings.Contains(out, "note  1        coder   \"42\"") || !strings.Contains(out, `plan  2        coder   {"steps":4}`) {
		t.Errorf("orch bb ls: exit %d\n%s", code, out)
	}

	unregister()
	if code, _, stderr := runOrch(t, dir, "bb", "get", "plan"); code != 1 || !strings.Contains(stderr, "this attempt has ended") {
		t.Errorf("orch bb get after the attempt ended: exit %d, %q", code, stderr)
	}
}

// Inside a Temporal agent with neither a database nor an endpoint, orch bb
// says so; another run, or --db, reads a database as usual.
func TestBBInsideATemporalAgentWithoutEndpoint(t *testing.T) {
	inTemporalAgent(t, "", "")
	dir := t.TempDir()
	code, _, stderr := runOrch(t, dir, "bb", "set", "plan", "1")
	if code != 2 || !strings.Contains(stderr, "run r-worker runs on a Temporal worker: this machine has no run database") || !strings.Contains(stderr, "ORCH_MCP_URL and ORCH_MCP_TOKEN are unset") {
		t.Errorf("orch bb set with no endpoint: exit %d, %q", code, stderr)
	}
	code, _, stderr = runOrch(t, dir, "bb", "get", "--run", "other", "plan")
	if code != 2 || strings.Contains(stderr, "Temporal worker") {
		t.Errorf("orch bb get --run other: exit %d, %q (want the database's own error)", code, stderr)
	}
}
