//go:build unix

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestCollabExitCodes checks the exit codes of orch bb, orch answer and orch
// memory in-process (testscript's `! exec` only tells zero from non-zero).
func TestCollabExitCodes(t *testing.T) {
	for _, k := range []string{"ORCH_RUN_ID", "ORCH_AGENT_ID", "ORCH_CUE_ID", "ORCH_ATTEMPT", "ORCH_DB"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	dbFile := filepath.Join(dir, "orch.db")
	db, err := store.Open(dbFile, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	started := record.RunStartedData{Cuelist: "c", Cues: []record.CueInfo{{ID: "A", Agents: []string{"a"}}}}
	question := record.QuestionData{ID: "q1", Question: "Now?", Complexity: "quick", To: "person"}
	err = db.Append(ctx,
		record.Event{RunID: "done", Type: record.EvRunStarted, Data: started},
		record.Event{RunID: "done", Type: record.EvRunState, State: string(record.RunFailed)},
		record.Event{RunID: "live", Type: record.EvRunStarted, Data: started},
		record.Event{RunID: "live", Type: record.EvQuestion, Cue: "A", Agent: "a", Attempt: 1, Data: question},
	)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	missing := filepath.Join(dir, "none", "orch.db")
	tests := []struct {
		name   string
		args   []string
		want   int
		stderr string
	}{
		{"bb set", []string{"bb", "set", "--run", "live", "k", "1"}, exitOK, ""},
		{"bb get", []string{"bb", "get", "--run", "live", "k"}, exitOK, ""},
		{"bb get missing key", []string{"bb", "get", "--run", "live", "nope"}, exitFailed, `has no blackboard key "nope"`},
		{"bb set ended run", []string{"bb", "set", "--run", "done", "k", "1"}, exitFailed, "run done is failed"},
		{"bb unknown run", []string{"bb", "ls", "--run", "zzz"}, exitUsage, `no run "zzz"`},
		{"bb no database", []string{"bb", "ls", "--db", missing}, exitUsage, "does not exist"},
		{"bb bad output", []string{"bb", "ls", "--output", "xml"}, exitUsage, `unknown output "xml"`},
		{"bb set one arg", []string{"bb", "set", "k"}, exitUsage, "needs at least 2"},
		{"answer unknown question", []string{"answer", "live", "q7", "yes"}, exitFailed, `no question "q7"; open questions:`},
		{"answer without owner", []string{"answer", "live", "q1", "yes"}, exitFailed, "no orch process is running it"},
		{"answer empty", []string{"answer", "live", "q1", ""}, exitUsage, "the answer is empty"},
		{"answer unknown run", []string{"answer", "zzz", "q1", "yes"}, exitUsage, `no run "zzz"`},
		{"answer too few", []string{"answer", "live", "q1"}, exitUsage, "needs at least 3"},
		{"memory ls no database", []string{"memory", "ls", "--db", missing}, exitOK, ""},
		{"memory search", []string{"memory", "search", "x"}, exitOK, ""},
		{"memory search nothing", []string{"memory", "search"}, exitUsage, "needs at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--db", dbFile}, tt.args...)
			code, _, stderr := runOrch(t, dir, args...)
			if code != tt.want {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.want, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.stderr)
			}
			if strings.Count(stderr, "orch:") > 1 {
				t.Errorf("error printed more than once: %q", stderr)
			}
		})
	}
}
