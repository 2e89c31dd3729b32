package temporal

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/orch-cli/orch/internal/testfs"
	"github.com/orch-cli/orch/planner"
)

// freshPlans gives the test a worker's plan cache of its own (the package's
// tests run one at a time).
func freshPlans(t testing.TB) *planCache {
	t.Helper()
	before := plans
	plans = newPlanCache()
	t.Cleanup(func() { plans = before })
	return plans
}

// replayHistory replays a history through the SDK's replayer, as a worker
// does for a query of a finished run or a sticky-cache miss.
func replayHistory(t testing.TB, h *historypb.History) {
	t.Helper()
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DisableDeadlockDetection: true})
	if err != nil {
		t.Fatal(err)
	}
	RegisterWorkflow(r)
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := r.ReplayWorkflowHistory(quiet, h); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// historyOf reads a history exported with temporal workflow show --output
// json (gzipped when the name ends in .gz).
func historyOf(t testing.TB, path string) *historypb.History {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if len(path) > 3 && path[len(path)-3:] == ".gz" {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	h, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// planPayload is the PlanDoc payload in a history: the plan activity's
// result, the first activity the workflow runs.
func planPayload(t testing.TB, h *historypb.History) []byte {
	t.Helper()
	for _, e := range h.Events {
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
			return a.GetResult().GetPayloads()[0].GetData()
		}
	}
	t.Fatal("no activity result in the history")
	return nil
}

// freshBuild is the plan a workflow builds from the payload with nothing
// kept.
func freshBuild(t testing.TB, payload []byte) *planner.Plan {
	t.Helper()
	var doc PlanDoc
	if err := json.Unmarshal(payload, &doc); err != nil {
		t.Fatal(err)
	}
	p, err := BuildPlan(doc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// samePlan fails the test when got is not what a fresh build gives:
// everything of the plan (its cues, their links, the conflicts, the
// closure), and no library graph (a worker keeps plans without it).
func samePlan(t *testing.T, got, want *planner.Plan) {
	t.Helper()
	if got.Graph != nil {
		t.Fatal("the kept plan holds the planner's library graph")
	}
	if !reflect.DeepEqual(*got, *want) {
		t.Fatal("the kept plan differs from a fresh build")
	}
}

// kept is the plan the cache holds (the only one).
func kept(t *testing.T, c *planCache) *planner.Plan {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) != 1 {
		t.Fatalf("the worker keeps %d plans, want 1", len(c.entries))
	}
	return c.entries[0].plan
}

// TestReplaysBuildThePlanOnce: the three executions of one run that
// continued as new (golden histories), replayed on one worker as a query
// of each would, build the plan once; the plan kept after the three is
// what a fresh build gives (nothing of the replays changed it).
func TestReplaysBuildThePlanOnce(t *testing.T) {
	c := freshPlans(t)
	var payload []byte
	for _, f := range []string{"continue-1", "continue-2", "continue-3"} {
		h := historyOf(t, "testdata/histories/"+f+".json")
		payload = planPayload(t, h)
		replayHistory(t, h)
		replayHistory(t, h) // the same execution again (a second query)
	}
	if c.built != 1 {
		t.Fatalf("six replays of one run's executions built the plan %d times, want 1", c.built)
	}
	samePlan(t, kept(t, c), freshBuild(t, payload))
}

// TestWorkflowsShareAPlanUnchanged: two runs of one cuelist with a fan-out
// (its items are copies of the cue the scheduler makes at run time) on one
// worker build the plan once, and after both ran the plan is still what a
// fresh build gives.
func TestWorkflowsShareAPlanUnchanged(t *testing.T) {
	root := testfs.Write(t, map[string]string{"c.yaml": fanOutCuelist}, 0o644)
	c := freshPlans(t)
	runCompleted(t, root, "c.yaml", "r-plan-1")
	runCompleted(t, root, "c.yaml", "r-plan-2")
	if c.built != 1 {
		t.Fatalf("two runs of one cuelist on one worker built its plan %d times, want 1", c.built)
	}
	doc, err := (&Activities{Root: root}).Plan(context.Background(), PlanInput{Path: "c.yaml", SpecHash: specHashOf(t, root, "c.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	samePlan(t, kept(t, c), freshBuild(t, payload))
}

// TestPlanCacheKeepsTheLastUsed: past its size the cache drops the plan
// used least recently, and a plan found is used again.
func TestPlanCacheKeepsTheLastUsed(t *testing.T) {
	c := &planCache{max: 2, maxCues: 10}
	doc := func(id string) *commonpb.Payload {
		p, err := converter.GetDefaultDataConverter().ToPayload(json.RawMessage(`{"Cuelist":{"ID":"` + id + `","Cues":[{"ID":"A","Agents":["x"]}]},"Agents":[{"ID":"x","Command":["true"]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, id := range []string{"one", "two", "one", "three", "one", "two"} {
		if _, err := c.plan(doc(id)); err != nil {
			t.Fatal(err)
		}
	}
	// one, two built; one found; three built (two dropped); one found; two built again.
	if c.built != 4 {
		t.Fatalf("built %d plans, want 4", c.built)
	}
	if p, _ := c.plan(doc("one")); c.built != 4 || p.Cuelist.ID != "one" {
		t.Fatalf("the plan of one was not kept (built %d)", c.built)
	}
	if _, err := c.plan(nil); err == nil {
		t.Fatal("no payload gave a plan")
	}

	// Past its cues (one a plan here), fewer plans; the last one used stays.
	c = &planCache{max: 4, maxCues: 1}
	for _, id := range []string{"one", "two", "two", "one"} {
		if _, err := c.plan(doc(id)); err != nil {
			t.Fatal(err)
		}
	}
	if c.built != 3 || len(c.entries) != 1 || c.cues != 1 {
		t.Fatalf("built %d plans, keeps %d of %d cues; want 3 built, 1 kept of 1 cue", c.built, len(c.entries), c.cues)
	}
	c = &planCache{max: 4, maxCues: 0}
	for range 2 {
		if _, err := c.plan(doc("one")); err != nil {
			t.Fatal(err)
		}
	}
	if c.built != 1 {
		t.Fatalf("a plan larger than the cache was built %d times, want 1", c.built)
	}
}

// BenchmarkReplayLongChain replays one execution of a 20,000-cue chain of
// /bin/true (testdata/replay: the second of its executions, about 650 cues
// after continuing as new, recorded on a dev server): built, as a worker's
// first replay of the run; kept, as every later one.
func BenchmarkReplayLongChain(b *testing.B) {
	h := historyOf(b, "testdata/replay/long-20000.json.gz")
	for _, keep := range []bool{false, true} {
		name := "built"
		if keep {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			freshPlans(b)
			replayHistory(b, proto.Clone(h).(*historypb.History))
			for b.Loop() {
				b.StopTimer()
				hi := proto.Clone(h).(*historypb.History)
				if !keep {
					plans = newPlanCache()
				}
				b.StartTimer()
				replayHistory(b, hi)
			}
		})
	}
}

// TestWorkerKeepsAFewCompiledCuelists: a worker compiles a cuelist once
// (its activities ask for it at every phase), and a long-lived worker
// serving many cuelists, or many edits of one, keeps only a few of them.
func TestWorkerKeepsAFewCompiledCuelists(t *testing.T) {
	files := map[string]string{}
	for i := range planCacheSize + 2 {
		files[fmt.Sprintf("c%d.yaml", i)] = fmt.Sprintf("cuelist:\n  id: c%d\n  cues:\n    - {id: A, agents: [x]}\n---\nagent: {id: x, command: ['true']}\n", i)
	}
	root := testfs.Write(t, files, 0o644)
	a := &Activities{Root: root}
	for i := range planCacheSize + 2 {
		path := fmt.Sprintf("c%d.yaml", i)
		for range 2 {
			if _, err := a.Plan(context.Background(), PlanInput{Path: path, SpecHash: specHashOf(t, root, path)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a.plans.built != planCacheSize+2 || len(a.plans.entries) != planCacheSize {
		t.Fatalf("compiled %d cuelists and kept %d; want %d compiled, once each, and %d kept", a.plans.built, len(a.plans.entries), planCacheSize+2, planCacheSize)
	}
}
