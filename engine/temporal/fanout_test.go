package temporal

import (
	"reflect"
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/testfs"
	"github.com/orch-cli/orch/runner/record"
)

// fanOutCuelist: PLAN lists three tasks, IMPLEMENT fans out over them two
// at a time, SHOW reads their outputs.
const fanOutCuelist = `agent:
  id: plan
  run: echo 'tasks=[{"id":"db"},{"id":"ui"},{"id":"docs"}]' >> "$ORCH_OUTPUT"
  provides: [tasks]
  workdir: .
---
agent:
  id: impl
  concurrency: 4
  run: echo "done=$ORCH_CUE_ID $ORCH_ITEM" >> "$ORCH_OUTPUT"
  provides: [done]
  workdir: .
---
agent:
  id: show
  run: echo "seen=$ORCH_INPUT_DONE" >> "$ORCH_OUTPUT"
  provides: [seen]
  workdir: .
---
cuelist:
  id: fan
  cues:
    - {id: PLAN, agents: [plan]}
    - {id: IMPLEMENT, agents: [impl], dependencies: [PLAN], for_each: {from: PLAN.tasks, max_parallel: 2}}
    - {id: SHOW, agents: [show], dependencies: [IMPLEMENT]}
`

// TestFanOutOnTemporal: the scheduler core's fan-out runs on Temporal as on
// the local engine: the expansion is recorded (cue/expanded) before any
// item's GO, each item runs its own attempt on a worker with the item in
// ORCH_ITEM, and the cue's outputs are lists in item order that a
// dependent reads.
func TestFanOutOnTemporal(t *testing.T) {
	root := testfs.Write(t, map[string]string{"c.yaml": fanOutCuelist}, 0o644)
	evs := runCompleted(t, root, "c.yaml", "r6")
	expanded, firstGo := -1, -1
	var outputs map[string]any
	for i, e := range evs {
		switch {
		case e.Type == record.EvFanOut:
			expanded = i
			d := e.Data.(record.FanOutData)
			if len(d.Items) != 3 || d.Items[0].ID != "IMPLEMENT[db]" || d.Items[2].ID != "IMPLEMENT[docs]" {
				t.Errorf("expansion %+v", d)
			}
		case e.Type == record.EvCueState && e.State == "go" && strings.HasPrefix(e.Cue, "IMPLEMENT[") && firstGo < 0:
			firstGo = i
		case e.Type == record.EvCueState && e.Cue == "IMPLEMENT" && e.State == "completed":
			outputs = e.Data.(record.CueStateData).Outputs
		}
	}
	if expanded < 0 || firstGo < expanded {
		t.Errorf("expansion at %d, first item GO at %d:\n%s", expanded, firstGo, story(evs))
	}
	want := []any{`IMPLEMENT[db] {"id":"db"}`, `IMPLEMENT[ui] {"id":"ui"}`, `IMPLEMENT[docs] {"id":"docs"}`}
	if !reflect.DeepEqual(outputs["done"], want) {
		t.Errorf("IMPLEMENT's outputs %v, want done %v", outputs, want)
	}
	if s := story(evs); !strings.Contains(s, "cue/state SHOW completed") {
		t.Errorf("SHOW did not complete:\n%s", s)
	}
}
