package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/control"
)

// TestServeCatchesUpATemporalRun: orch serve reads a Temporal run nobody
// follows through the controller, which catches its store up with its
// workflow (orch-temporal sync) as orch status does — at most once a second
// however often a page or stream reads it (every 150 ms), then again.
func TestServeCatchesUpATemporalRun(t *testing.T) {
	const id = "20261123-ffff"
	dbFile := recordTemporalRun(t, id)
	bin, calls := t.TempDir(), filepath.Join(t.TempDir(), "calls")
	script := "#!/bin/sh\necho \"$1\" >> \"" + calls + "\"\n"
	if err := os.WriteFile(filepath.Join(bin, "orch-temporal"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	count := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "sync\n")
	}
	ctl := control.New(control.Config{DB: dbFile})
	ctx := context.Background()
	start := time.Now()
	for i := 0; i < 5; i++ {
		if _, err := ctl.Events(ctx, control.EventsRequest{Run: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := ctl.Status(ctx, control.StatusRequest{Run: id}); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n < 1 || (time.Since(start) < time.Second && n != 1) {
		t.Fatalf("%d catch-ups for 10 reads", n)
	}
	time.Sleep(1100 * time.Millisecond)
	before := count()
	if _, err := ctl.Events(ctx, control.EventsRequest{Run: id}); err != nil {
		t.Fatal(err)
	}
	if count() != before+1 {
		t.Fatalf("no catch-up a second later: %d then %d", before, count())
	}
}
