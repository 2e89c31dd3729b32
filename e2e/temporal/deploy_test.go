//go:build temporal_e2e && linux

package temporal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestTemporalDeploy runs examples/deploy on Temporal through the worst of a
// day: one of the two workers is killed (kill -9) while it runs CUE-100's GO,
// the server is restarted on its database while the run waits for the
// manual CUE-300, then a person's `orch go` (and `orch resume`, which
// follows the run into the store again) finishes it. What `orch status`
// reads from SQLite must match a local run of the same cuelist, and no
// agent may be left running.
func TestTemporalDeploy(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	orch := buildOrch(t, root, tmp)
	server := startDevServer(t, root, tmp)
	proj, gate := deployProject(t, root, tmp)
	// Relative to the project, which the workers serve (--root): a worker
	// loads the cuelist from its own checkout.
	cuelist := filepath.Join("deploy", "cuelist.yaml")
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+server.addr,
		"PATH="+filepath.Dir(orch)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ORCH_ENGINE=", "ORCH_DB=")
	run := orchIn(t, orch, proj, env)

	// The reference: the same cuelist run locally, the gate open.
	local := filepath.Join(tmp, "local.db")
	gate.openAll(t)
	if out, code := run("run", "--db", local, cuelist); code != 3 {
		t.Fatalf("local orch run: exit %d, want 3 (waiting for GO)\n%s", code, out)
	}
	localRun := runID(t, run, local)
	if out, code := run("go", "--db", local, localRun, "CUE-300"); code != 0 {
		t.Fatalf("local orch go: exit %d, want 0\n%s", code, out)
	}
	want := normalStatus(t, run, local, localRun)
	gate.close(t)

	// The same on Temporal, with two workers.
	db := filepath.Join(tmp, "temporal.db")
	workers := map[int]bool{}
	for i := 1; i <= 2; i++ {
		w := startProc(t, tmp, fmt.Sprintf("worker%d", i), env, proj, orch, "worker", "--root", proj)
		workers[w.cmd.Process.Pid] = true
	}
	orchRun := startProc(t, tmp, "orch-run", env, proj, orch, "run", "--engine", "temporal", "--db", db, cuelist)

	// CUE-100's GO holds at the gate: kill -9 the worker running it (and
	// whatever it started between itself and the agent, but not the agent:
	// a crashed worker leaves its agents behind, the engine must not).
	first := gate.waitAgent(t, nil)
	chain, worker := ancestry(first, workers)
	if worker == 0 {
		t.Fatalf("the agent (pid %d) was not started by either worker %v", first, workers)
	}
	for _, pid := range append(chain, worker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Logf("killed worker %d (and %v) during CUE-100's GO (agent pid %d)", worker, chain, first)
	// A supervisor would start it again.
	startProc(t, tmp, "worker1-again", env, proj, orch, "worker", "--root", proj)

	// Every later agent passes the gate; the first, orphaned one never does.
	stopGate := gate.openNewcomers(t, first)
	if code := orchRun.wait(t); code != 3 {
		out, _ := run("status", "--db", db, "last")
		t.Fatalf("orch run --engine temporal: exit %d, want 3 (waiting for GO)\n%s", code, out)
	}
	id := runID(t, run, db)

	server.restart(t)
	if out, code := run("go", "--db", db, id, "CUE-300"); code != 0 {
		t.Fatalf("orch go %s CUE-300 (Temporal run): exit %d, want 0\n%s", id, code, out)
	}
	// orch go only signals a Temporal run when no follower copies its events
	// into the store any more (orch run exited 3): orch resume follows it.
	if !ended(runState(t, run, db, id)) {
		if out, code := run("resume", "--db", db, id); code != 0 {
			t.Fatalf("orch resume %s (Temporal run): exit %d, want 0\n%s", id, code, out)
		}
	}
	eventually(t, "the Temporal run "+id+" did not end in orch status", func() bool {
		return ended(runState(t, run, db, id))
	})
	if t.Failed() {
		out, _ := run("events", "--db", db, id)
		t.Logf("orch events %s:\n%s", id, out)
	}
	stopGate()
	got := normalStatus(t, run, db, id)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("orch status of the Temporal run differs from the local run's\n--- temporal:\n%s\n--- local:\n%s", g, w)
	}

	// No agent left: neither the orphan of the killed worker nor any other.
	agents := filepath.Join(proj, "deploy")
	for deadline := time.Now().Add(patience); ; time.Sleep(100 * time.Millisecond) {
		left := processesIn(agents)
		if len(left) == 0 && !anyAlive(gate.pids()) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("agent processes still running %s after the run ended (pid %d was the killed worker's):\n%s",
				patience, first, strings.Join(left, "\n"))
			break
		}
	}
}

// orchRunner runs one orch command, returning its combined output and exit code.
type orchRunner func(args ...string) (string, int)

func runID(t *testing.T, run orchRunner, db string) string {
	t.Helper()
	var st struct{ ID string }
	out, code := run("status", "--db", db, "last", "--output", "json")
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.ID == "" {
		t.Fatalf("orch status last (%s): exit %d\n%s", db, code, out)
	}
	return st.ID
}

func runState(t *testing.T, run orchRunner, db, id string) string {
	t.Helper()
	var st struct{ State string }
	out, code := run("status", "--db", db, id, "--output", "json")
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("orch status %s: exit %d\n%s", id, code, out)
	}
	return st.State
}

func ended(state string) bool {
	switch state {
	case "completed", "failed", "stopped", "interrupted":
		return true
	}
	return false
}

// runStatus is the part of `orch status --output json` two engines must
// agree on: no times, pids, hosts or ids.
type runStatus struct {
	Cuelist string         `json:"cuelist"`
	State   string         `json:"state"`
	Counts  map[string]int `json:"counts"`
	Cues    []cueStatus    `json:"cues"`
}

type cueStatus struct {
	ID       string            `json:"id"`
	State    string            `json:"state"`
	Reason   string            `json:"reason,omitempty"`
	Agents   []string          `json:"agents"`
	After    []string          `json:"after,omitempty"`
	Outputs  map[string]string `json:"outputs,omitempty"`
	Attempts []attemptStatus   `json:"attempts"`
}

type attemptStatus struct {
	Number   int    `json:"number"`
	Agent    string `json:"agent"`
	State    string `json:"state"`
	Reason   string `json:"reason,omitempty"`
	Class    string `json:"class,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
}

func normalStatus(t *testing.T, run orchRunner, db, id string) runStatus {
	t.Helper()
	out, code := run("status", "--db", db, id, "--output", "json")
	var st runStatus
	if code != 0 {
		t.Fatalf("orch status %s: exit %d\n%s", id, code, out)
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("orch status %s --output json: %v\n%s", id, err, out)
	}
	sort.Slice(st.Cues, func(i, j int) bool { return st.Cues[i].ID < st.Cues[j].ID })
	// A local orch run that pauses for a manual GO exits 3: the attempt it
	// had prepared for that cue is stopped ("the run is paused") and orch go
	// starts another. On Temporal the workflow waits and the same attempt
	// goes on (README, Engines). The attempts are compared without those.
	for i, c := range st.Cues {
		kept := c.Attempts[:0]
		for _, a := range c.Attempts {
			if a.State == "stopped" && a.Reason == "the run is paused" {
				continue
			}
			a.Number = len(kept) + 1
			kept = append(kept, a)
		}
		st.Cues[i].Attempts = kept
	}
	return st
}

// gate holds the deploy-build agent's GO until the test lets it through:
// each agent writes its pid into dir and waits for dir/open-all or
// dir/open-PID (for five minutes at most, so a leftover is seen).
type gate struct{ dir string }

func deployProject(t *testing.T, root, tmp string) (proj string, g gate) {
	t.Helper()
	proj = filepath.Join(tmp, "proj")
	g = gate{filepath.Join(tmp, "gate")}
	// The agents source ../../lib/orch_agent.sh: lib comes along.
	for _, d := range []string{"deploy", "lib"} {
		if err := os.CopyFS(filepath.Join(proj, d), os.DirFS(filepath.Join(root, "examples", d))); err != nil {
			t.Fatalf("copy examples/%s: %v", d, err)
		}
	}
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	build := filepath.Join(proj, "deploy", "agents", "build.sh")
	src, err := os.ReadFile(build)
	if err != nil {
		t.Fatal(err)
	}
	hold := fmt.Sprintf(`echo $$ >%[1]q/pid-$$
i=0
while [ ! -e %[1]q/open-all ] && [ ! -e %[1]q/open-$$ ]; do
	i=$((i + 1)); [ $i -lt 3000 ] || exit 1; sleep 0.1
done
`, g.dir)
	// The GO's simulated work (the --prepare branch has no sleep).
	patched := strings.Replace(string(src), "sleep 0.1\n", hold, 1)
	if patched == string(src) {
		t.Fatal("examples/deploy/agents/build.sh has no `sleep 0.1` to hold the GO at: update the test")
	}
	if err := os.WriteFile(build, []byte(patched), 0o755); err != nil {
		t.Fatal(err)
	}
	return proj, g
}

func (g gate) openAll(t *testing.T) { touch(t, filepath.Join(g.dir, "open-all")) }
func (g gate) close(t *testing.T) {
	if err := os.Remove(filepath.Join(g.dir, "open-all")); err != nil {
		t.Fatal(err)
	}
	for _, pid := range g.pids() { // the local run's: done with
		os.Remove(filepath.Join(g.dir, "pid-"+strconv.Itoa(pid)))
	}
}

func (g gate) pids() []int {
	var pids []int
	names, _ := filepath.Glob(filepath.Join(g.dir, "pid-*"))
	for _, n := range names {
		if pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(n), "pid-")); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitAgent waits for an agent at the gate that is not in seen.
func (g gate) waitAgent(t *testing.T, seen map[int]bool) int {
	t.Helper()
	var pid int
	eventually(t, "no deploy-build agent reached its GO", func() bool {
		for _, p := range g.pids() {
			if !seen[p] && alive(p) {
				pid = p
				return true
			}
		}
		return false
	})
	return pid
}

// openNewcomers lets every agent but held through the gate until stopped.
func (g gate) openNewcomers(t *testing.T, held int) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, p := range g.pids() {
				if p != held {
					_ = os.WriteFile(filepath.Join(g.dir, "open-"+strconv.Itoa(p)), nil, 0o644)
				}
			}
			select {
			case <-quit:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(quit); <-done }) }
	t.Cleanup(func() {
		stop()
		// The test's leftovers, once it has looked for them.
		for _, p := range g.pids() {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	return stop
}

func anyAlive(pids []int) bool {
	for _, p := range pids {
		if alive(p) {
			return true
		}
	}
	return false
}

func touch(t *testing.T, path string) {
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Error(err)
	}
}
