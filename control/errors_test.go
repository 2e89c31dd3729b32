package control

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// completedRun records a completed run r1 of one cue A in a new database
// and returns its path.
func completedRun(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orch.db")
	w, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	started := record.RunStartedData{Cuelist: "c", Cues: []record.CueInfo{{ID: "A", Agents: []string{"a"}}}}
	if err := w.Append(context.Background(), record.Event{RunID: "r1", Type: record.EvRunStarted, Data: started},
		record.Event{RunID: "r1", Type: record.EvCueState, Cue: "A", State: string(record.CueCompleted)},
		record.Event{RunID: "r1", Type: record.EvRunState, State: string(record.RunCompleted), Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestErrorKinds: what a caller (the command line, serve, an MCP tool)
// reads from an error to report it: the kind says whose the trouble is,
// the text what the command says.
func TestErrorKinds(t *testing.T) {
	ctx := context.Background()
	ctl := New(Config{DB: completedRun(t)})
	defer ctl.Close()
	_, goErr := ctl.Go(ctx, GoRequest{Run: "r1", Cue: "Z", Wait: time.Second})
	_, goOver := ctl.Go(ctx, GoRequest{Run: "r1", Cue: "A", Wait: time.Second})
	_, stopErr := ctl.Stop(ctx, StopRequest{Run: "r1", Cue: "Z", Wait: time.Second})
	_, answerErr := ctl.Answer(ctx, AnswerRequest{Run: "r1", Question: "q1", Text: "yes", Wait: time.Second})
	_, retryErr := ctl.Retry(ctx, RetryRequest{Run: "r1", Detach: &Detach{Log: "test"}})
	_, resolveErr := ctl.Resolve(ctx, "nope")
	_, ackErr := ctl.Ack(ctx, AckRequest{Run: "r1", ID: "e9"})
	missing := New(Config{DB: filepath.Join(t.TempDir(), "none.db")})
	_, missingErr := missing.Runs(ctx, RunsRequest{})
	for _, c := range []struct {
		what string
		err  error
		kind Kind
		says string
	}{
		{"a GO for a cue the run does not have", goErr, Invalid, `run r1 has no cue "Z"`},
		{"a GO for a cue that is over", goOver, Invalid, "cue A of run r1 is already completed"},
		{"a stop of a cue the run does not have", stopErr, Invalid, "run r1 has no cue Z"},
		{"an answer to a question the run does not have", answerErr, Refused, `run r1 has no question "q1"`},
		{"a retry, in the background, of a completed run", retryErr, Refused, "run r1"},
		{"a run that does not exist", resolveErr, NotFound, "nope"},
		{"an escalation the run does not have", ackErr, Invalid, "e9"},
		{"no database", missingErr, NotFound, "does not exist"},
	} {
		if c.err == nil || KindOf(c.err) != c.kind || !strings.Contains(c.err.Error(), c.says) {
			t.Errorf("%s: %v (kind %d), want kind %d saying %q", c.what, c.err, KindOf(c.err), c.kind, c.says)
		}
	}
	if !errors.Is(missingErr, ErrNoDatabase) {
		t.Errorf("no database: %v does not wrap ErrNoDatabase", missingErr)
	}
	if KindOf(&HandOverError{Code: 2}) != Invalid || KindOf(&HandOverError{Code: 1}) != Refused || KindOf(errors.New("x")) != Failed {
		t.Error("the kinds of orch-temporal's exit statuses, or of an error with none, are wrong")
	}
}
