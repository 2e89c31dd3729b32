package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// TestWatch: a Watch sees a commit made through another handle (as another
// process makes them), and nothing when nothing was committed.
func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orch.db")
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ctx := context.Background()
	watch, err := ro.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	if changed, err := watch.Changed(ctx); !changed || err != nil {
		t.Errorf("first look: %v, %v; want changed", changed, err)
	}
	if changed, err := watch.Changed(ctx); changed || err != nil {
		t.Errorf("nothing written: %v, %v; want unchanged", changed, err)
	}
	appendOK(t, w, record.Event{RunID: "r1", Type: record.EvRunStarted, Data: record.RunStartedData{Cuelist: "c"}})
	if changed, err := watch.Changed(ctx); !changed || err != nil {
		t.Errorf("after a commit: %v, %v; want changed", changed, err)
	}
}
