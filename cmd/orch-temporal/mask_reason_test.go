package main

import (
	"context"
	"strings"
	"testing"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/runner/record"
)

// The reason a followed run ended with is what orch-temporal run prints
// last (run R failed: REASON): masked like the event the store has, when
// the secret is one only the follower knows.
func TestFollowersEndReasonMasked(t *testing.T) {
	const secret = "tok-reason-6161-yy"
	t.Setenv("REASON_TEST_TOKEN", secret)
	db, _ := temporalStore(t, "r1", "tok")
	wf := fakeWorkflow{page: func(after int64) temporal.EventsPage {
		p := temporal.EventsPage{Done: true}
		if after < 2 {
			p.Events = []record.Event{{Seq: 2, Type: record.EvRunState, State: string(record.RunFailed), Reason: "cue A failed: bad token " + secret}}
		}
		return p
	}}
	state, reason, err := (&follower{c: wf, db: db, id: "r1", wfID: "orch-r1", token: "tok", mask: followerMask(&record.TemporalRun{})}).follow(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if state != record.RunFailed || strings.Contains(reason, secret) || !strings.Contains(reason, "[redacted:REASON_TEST_TOKEN]") {
		t.Errorf("the run ended %s: %q", state, reason)
	}
	r, err := db.Run(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Reason != reason {
		t.Errorf("the store's reason %q, the printed one %q", r.Reason, reason)
	}
}
