package store

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// The tail of an attempt is its own last lines, oldest first: not another
// attempt's, agent's, cue's or run's.
func TestAttemptTail(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a", "b")
	startRun(t, d, "r2", "a")
	for i := range 30 {
		d.Log(record.LogLine{RunID: "r1", Cue: "a", Agent: "x", Attempt: 1, Stream: "stderr", Text: strconv.Itoa(i)})
		d.Log(record.LogLine{RunID: "r1", Cue: "a", Agent: "x", Attempt: 2, Stream: "stderr", Text: "attempt 2"})
		d.Log(record.LogLine{RunID: "r1", Cue: "a", Agent: "y", Attempt: 1, Stream: "stderr", Text: "agent y"})
		d.Log(record.LogLine{RunID: "r1", Cue: "b", Agent: "x", Attempt: 1, Stream: "stderr", Text: "cue b"})
		d.Log(record.LogLine{RunID: "r2", Cue: "a", Agent: "x", Attempt: 1, Stream: "stderr", Text: "run r2"})
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := d.AttemptTail(ctx, "r1", "a", "x", 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"27", "28", "29"}; !slices.Equal(got, want) {
		t.Errorf("tail = %q, want %q", got, want)
	}
	if got, _ := d.AttemptTail(ctx, "r1", "a", "x", 1, 100); len(got) != 30 || got[0] != "0" {
		t.Errorf("a tail longer than the output = %d lines from %q", len(got), got)
	}
	if got, err := d.AttemptTail(ctx, "r1", "a", "x", 9, 5); err != nil || len(got) != 0 {
		t.Errorf("an attempt that printed nothing: %q, %v", got, err)
	}
	if got, _ := d.AttemptTail(ctx, "r1", "a", "x", 1, 0); len(got) != 0 {
		t.Errorf("0 lines asked, got %q", got)
	}
}
