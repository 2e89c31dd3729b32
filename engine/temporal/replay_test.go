package temporal

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
)

// TestReplayGoldenHistories replays every history recorded under
// testdata/histories (exported from a real run: temporal workflow show
// --output json) against today's workflow code: a change that is not
// behind workflow.GetVersion fails here with a determinism error.
func TestReplayGoldenHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no golden history recorded yet (record one from a dev-server run: see testdata/histories/README)")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			RegisterWorkflow(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replaying %s: %v", f, err)
			}
		})
	}
}
