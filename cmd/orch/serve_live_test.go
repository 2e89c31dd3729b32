//go:build unix

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// TestServeLiveRun: on a running run (its owner here, as the runner does it)
// POST answer delivers the answer and POST go sends GO, as orch answer and
// orch go do.
func TestServeLiveRun(t *testing.T) {
	srv, w := serveFixture(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	for _, line := range []string{
		`{"run_id":"r2","type":"run/started","data":{"cuelist":"live","cues":[{"id":"A","agents":["a"]}]}}`,
		`{"run_id":"r2","type":"run/state","state":"running"}`,
		`{"run_id":"r2","type":"question/asked","cue":"A","agent":"a","attempt":1,"data":{"id":"q1","question":"Which database?","complexity":"deep","to":"person"}}`,
	} {
		var ev record.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if err := w.Append(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	owned := make(chan error, 1)
	go func() { owned <- own(ctx, w, "r2", true, 5*time.Minute) }()
	defer func() { cancel(); <-owned }()
	// The owner claims the run on its goroutine: a request before the claim
	// would find a running run nobody owns (interrupted).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if r, err := w.Run(ctx, "r2"); err == nil && r.OwnerPID != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fixture did not claim run r2 within 10s")
		}
	}
	code, body := post(t, srv.URL+"/api/runs/r2/answer", `{"question":"q1","answer":"PostgreSQL <b>"}`)
	if code != 200 || !strings.Contains(body, "q1 answered: delivered to a (cue A)") {
		t.Errorf("answer: %d %s", code, body)
	}
	code, body = get(t, srv.URL+"/api/runs/r2")
	if code != 200 || !strings.Contains(body, `"state": "answered"`) || !strings.Contains(body, `PostgreSQL \u003cb\u003e`) {
		t.Errorf("the answered question: %d %s", code, body)
	}
	code, body = post(t, srv.URL+"/api/runs/r2/go", `{"cue":"A"}`)
	if code != 200 || !strings.Contains(body, "GO for A sent to run r2") {
		t.Errorf("go: %d %s", code, body)
	}
}
