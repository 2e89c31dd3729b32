package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// BenchmarkCueBatch is what the runner commits per cue of a chain: the
// previous cue's attempt ending and completion, the next cue's WARNING,
// attempt start, STANDBY and GO, in one Append. The run has an owner's
// lease, as a real run has, so each commit is fenced.
func BenchmarkCueBatch(b *testing.B) {
	d, _ := openTest(b)
	cues := make([]string, b.N+1)
	for i := range cues {
		cues[i] = fmt.Sprintf("C%d", i)
	}
	ctx := context.Background()
	if err := d.Append(ctx, ownedStartedEvent(b, "r1", record.Owner{PID: 42, Host: "box", Token: "t1"}, cues...)); err != nil {
		b.Fatal(err)
	}
	at := time.Now()
	ev := func(typ, cue, state string, attempt int, data record.EventData) record.Event {
		return record.Event{RunID: "r1", At: at, Type: typ, Cue: cue, Agent: "a", Attempt: attempt, State: state, Data: data}
	}
	exit := 0
	if err := d.Append(ctx, ev(record.EvAttemptStarted, "C0", "", 1, record.AttemptStartedData{})); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		prev, next := cues[i], cues[i+1]
		err := d.Append(ctx,
			ev(record.EvAttemptEnded, prev, "completed", 1, record.AttemptEndedData{PID: 123, ExitCode: &exit}),
			ev(record.EvCueState, prev, "completed", 0, record.CueStateData{Outputs: map[string]any{}}),
			ev(record.EvCueState, next, "warning", 0, nil),
			ev(record.EvAttemptStarted, next, "", 1, record.AttemptStartedData{}),
			ev(record.EvCueState, next, "standby", 0, nil),
			ev(record.EvCueState, next, "go", 0, nil),
		)
		if err != nil {
			b.Fatal(err)
		}
	}
}
