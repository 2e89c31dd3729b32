package store

import (
	"context"
	"slices"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// TestMigrateV5ToV7 opens a database of schema 5 with a run in it: the run
// reads as before, its cues with no edges and not manual, and a run started
// after the migration records each cue's dependencies and whether it is
// manual.
func TestMigrateV5ToV7(t *testing.T) {
	path := olderDB(t, 5,
		`INSERT INTO runs (id, cuelist, state, created_at, started_at, ended_at) VALUES ('old', 'deploy', 'completed', 1, 1000000, 2000000)`,
		`INSERT INTO cues (run_id, cue_id, position, agents, state) VALUES ('old', 'build', 0, '["b"]', 'completed'), ('old', 'ship', 1, '["s"]', 'completed')`,
		`INSERT INTO events (run_id, seq, at, type, data) VALUES ('old', 1, 1000000, 'run/started', '{"cuelist":"deploy","cues":[{"id":"build","agents":["b"]},{"id":"ship","agents":["s"]}]}')`,
	)

	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	r, err := d.Run(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cues) != 2 || r.Cues[1].ID != "ship" || r.Cues[1].After != nil || r.Cues[1].Manual || r.Completed != 2 {
		t.Errorf("the run of schema 5: %+v", r.Cues)
	}
	runs, _, err := d.Runs(ctx, 0)
	if err != nil || len(runs) != 1 || runs[0].ID != "old" {
		t.Errorf("Runs = %+v, %v", runs, err)
	}

	started := record.RunStartedData{Cuelist: "c", Cues: []record.CueInfo{
		{ID: "A", Agents: []string{"a"}},
		{ID: "B", Agents: []string{"a"}, After: []string{"A"}, Manual: true},
		{ID: "C", Agents: []string{"a"}, After: []string{"A", "B"}},
	}}
	appendOK(t, d, record.Event{RunID: "new", Type: record.EvRunStarted, Data: started})
	r, err = d.Run(ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cues) != 3 || r.Cues[0].After != nil || r.Cues[0].Manual || !slices.Equal(r.Cues[1].After, []string{"A"}) || !r.Cues[1].Manual ||
		!slices.Equal(r.Cues[2].After, []string{"A", "B"}) || r.Cues[2].Manual {
		t.Errorf("the cues of a run of schema 6: %+v", r.Cues)
	}
	rec, err := d.LoadRun(ctx, "new")
	if err != nil || len(rec.Started.Cues) != 3 || !slices.Equal(rec.Started.Cues[2].After, []string{"A", "B"}) || !rec.Started.Cues[1].Manual {
		t.Errorf("LoadRun = %+v, %v", rec, err)
	}
	integrityOK(t, path)
}
