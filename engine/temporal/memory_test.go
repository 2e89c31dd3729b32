package temporal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// An agent on a worker has the run's memory, as locally: it finds what the
// run took with it when it was submitted (the store's items, versions and
// authors kept), keeps an item (masked: the secret never leaves the
// worker), forgets one, and its next search sees both. Each change is a
// note in the run's log carrying the item, for the store.
func TestMemoryOnWorkers(t *testing.T) {
	t.Setenv("MEM_SECRET", "hunter2-swordfish")
	root, path := repoRoot(t), "engine/temporal/testdata/memory/cuelist.yaml"
	env := realEnv(t, root)
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	snapshot := []record.MemoryItem{
		{Key: "runbook", Text: "deploy with the blue pipeline", Agent: "ops-bot", RunID: "r0", At: at, Version: 3},
		{Key: "forget", Text: "an old note", Agent: "ops-bot", RunID: "r0", At: at, Version: 1},
	}
	run := testRunID("r-mem")
	evs := completed(t, env, RunInput{RunID: run, Path: path, SpecHash: specHashOf(t, root, path), Memory: snapshot})
	out := outputsOf(t, evs, "KEEP-100")
	if got := fmt.Sprint(out["before"]); got != "[runbook v3 by ops-bot]" {
		t.Errorf("the first search found %s", got)
	}
	if got := fmt.Sprint(out["after"]); got != "[lesson v1 by mem-keeper runbook v3 by ops-bot]" && got != "[runbook v3 by ops-bot lesson v1 by mem-keeper]" {
		t.Errorf("the search after the write and the delete found %s", got)
	}
	v, err := env.QueryWorkflow(QueryEvents, int64(0))
	if err != nil {
		t.Fatal(err)
	}
	var p EventsPage
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, e := range p.Events {
		if m, ok := p.Memory[e.Seq]; ok {
			changes = append(changes, fmt.Sprintf("%s | %s %v %s %s %d %v", e.Reason, m.Item.Key, m.Delete, m.Item.Text, m.Item.RunID, m.Item.Version, m.Item.Tags))
		}
	}
	want := []string{
		"memory.write lesson by mem-keeper: version 1 | lesson false deploy on tuesdays, token [redacted:MEM_SECRET] " + run + " 1 [ops]",
		"memory.delete forget by mem-keeper: forgotten with its history | forget true  " + run + " 0 []",
	}
	if strings.Join(changes, "\n") != strings.Join(want, "\n") {
		t.Errorf("the log's memory changes:\n%s\nwant:\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}
	if b, _ := json.Marshal(p); strings.Contains(string(b), "hunter2") {
		t.Errorf("the secret left the worker: %s", b)
	}
}
