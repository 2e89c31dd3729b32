package store

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// UnfollowedTemporalRuns lists the runs on Temporal that have not ended and
// that no live follower holds: not a local run, not an ended one, not one
// a follower holds.
func TestUnfollowedTemporalRuns(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "local1", "a")
	for _, id := range []string{"temp1", "temp2", "ended"} {
		ev := startedEvent(t, id, time.Now().Add(-time.Hour), "a")
		data := ev.Data.(record.RunStartedData)
		data.OwnerToken = "gone"
		data.Temporal = &record.TemporalRun{Address: "h:7233", Namespace: "default", TaskQueue: "orch", WorkflowID: "orch-" + id, Path: "deploy.yaml"}
		ev.Data = data
		appendOK(t, d, ev)
	}
	appendOK(t, d, record.Event{RunID: "ended", Type: record.EvRunState, State: string(record.RunCompleted)})
	host, _ := os.Hostname()
	if err := d.ClaimRun(ctx, "temp2", record.Owner{PID: os.Getpid(), Host: host, Token: "follower"}); err != nil {
		t.Fatal(err)
	}
	ids, err := d.UnfollowedTemporalRuns(ctx)
	if err != nil || !slices.Equal(ids, []string{"temp1"}) {
		t.Errorf("UnfollowedTemporalRuns: %v %v, want [temp1]", ids, err)
	}
}
