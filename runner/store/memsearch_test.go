package store

import (
	"context"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// Items kept outside a store are searched as a store searches its own:
// words with their endings, a key match first; what is found comes back as
// given (version 7 stays 7, not the scratch database's 1).
func TestSearchItems(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	items := []record.MemoryItem{
		{Key: "lesson", Text: "deploying on Fridays breaks things", Tags: []string{"ops"}, Agent: "a1", RunID: "r1", At: at, Version: 7},
		{Key: "deploy", Text: "use the blue pipeline", Agent: "a2", RunID: "r2", At: at.Add(time.Second), Version: 2},
		{Key: "lunch", Text: "noodles", Agent: "a3", RunID: "r3", At: at, Version: 1},
	}
	got, err := SearchItems(context.Background(), items, "deploy", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Key != "deploy" || got[1].Key != "lesson" || got[1].Version != 7 || got[1].Agent != "a1" || !got[1].At.Equal(at) {
		t.Fatalf("found %+v", got)
	}
	if got, err := SearchItems(context.Background(), items, "  ", 0); err != nil || len(got) != 0 {
		t.Errorf("an empty query: %v, %v", got, err)
	}
}
