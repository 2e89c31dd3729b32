//go:build temporal_e2e && linux

package temporal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// faultsProject writes a two-cue project whose agent, hold, waits at a
// gate (as deployProject's build does): SHIP is not idempotent, NEXT
// follows it.
func faultsProject(t *testing.T, tmp string) (proj string, g gate) {
	t.Helper()
	proj = filepath.Join(tmp, "faults-proj")
	g = gate{filepath.Join(tmp, "faults-gate")}
	files := map[string]string{
		"faults/cuelist.yaml": `cuelist:
  id: faults
  include: [agents/*.yaml]
  defaults: {timeout: 5m}
  cues:
    - {id: SHIP, agents: [hold], idempotent: false}
    - {id: NEXT, agents: [hold], dependencies: [SHIP]}
`,
		"faults/agents/hold.yaml": `agent:
  id: hold
  command: [sh, hold.sh]
  protocol: none
  workdir: .
`,
		"faults/agents/hold.sh": fmt.Sprintf(`echo $$ >%[1]q/pid-$$
i=0
while [ ! -e %[1]q/open-all ] && [ ! -e %[1]q/open-$$ ]; do
	i=$((i + 1)); [ $i -lt 3000 ] || exit 1; sleep 0.1
done
`, g.dir),
	}
	writeFiles(t, proj, files)
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return proj, g
}

// child is the orch-temporal process orch (pid) runs, once it runs.
func child(t *testing.T, pid int) int {
	t.Helper()
	var found int
	eventually(t, fmt.Sprintf("orch (pid %d) started no orch-temporal", pid), func() bool {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			p, err := fmt.Sscanf(e.Name(), "%d", &found)
			if err != nil || p != 1 || ppid(found) != pid {
				continue
			}
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", found)); strings.Contains(string(cmdline), "orch-temporal") {
				return true
			}
		}
		return false
	})
	return found
}

// TestTemporalFaults: a worker killed (kill -9) during the GO of a cue that
// is not idempotent leaves it interrupted, waiting for orch go, never run
// again by itself, and its agent is stopped by the next worker's start; kill -9 of orch worker leaves no orch-temporal behind;
// SIGTERM to orch worker drains it: the GO it runs finishes and is not run
// again; a server restart during a GO does not kill the agent.
func TestTemporalFaults(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	orch := buildOrch(t, root, tmp)
	server := startDevServer(t, root, tmp)
	proj, gate := faultsProject(t, tmp)
	cuelist := filepath.Join("faults", "cuelist.yaml")
	db := filepath.Join(tmp, "faults.db")
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+server.addr,
		"PATH="+filepath.Dir(orch)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ORCH_ENGINE=", "ORCH_DB=")
	run := orchIn(t, orch, proj, env)
	seen := map[int]bool{}
	next := func() int { // the next agent at the gate
		pid := gate.waitAgent(t, seen)
		seen[pid] = true
		return pid
	}
	open := func(pid int) { touch(t, filepath.Join(gate.dir, "open-"+fmt.Sprint(pid))) }
	attempts := func(id, cue string) []attemptStatus {
		for _, c := range normalStatus(t, run, db, id).Cues {
			if c.ID == cue {
				return c.Attempts
			}
		}
		return nil
	}
	t.Cleanup(func() {
		for _, p := range gate.pids() {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		if t.Failed() {
			out, _ := run("events", "--db", db, "last")
			t.Logf("orch events last:\n%s", out)
		}
	})

	// 1. kill -9 of the worker (orch worker and its orch-temporal) during
	// SHIP's GO: SHIP is interrupted and the run waits for orch go.
	w1 := startProc(t, tmp, "worker1", env, proj, orch, "worker", "--root", proj)
	w1child := child(t, w1.cmd.Process.Pid)
	follow := startProc(t, tmp, "run1", env, proj, orch, "run", "--engine", "temporal", "--db", db, cuelist)
	held := next()
	_ = syscall.Kill(w1.cmd.Process.Pid, syscall.SIGKILL)
	_ = syscall.Kill(w1child, syscall.SIGKILL)
	w2 := startProc(t, tmp, "worker2", env, proj, orch, "worker", "--root", proj)
	if code := follow.wait(t); code != 3 {
		t.Fatalf("orch run after the worker's loss: exit %d, want 3 (SHIP waits for orch go)", code)
	}
	id := runID(t, run, db)
	st := normalStatus(t, run, db, id)
	if a := attempts(id, "SHIP"); st.State != "paused" || len(a) != 1 || a[0].State != "interrupted" || len(gate.pids()) != 1 {
		t.Fatalf("after the worker's loss: run %s, SHIP's attempts %+v, agents started %d: want paused, one interrupted attempt, one agent", st.State, a, len(gate.pids()))
	}
	// The lost worker's agent does not outlive the next worker's start
	// (worker2, of the same --root, sweeps what it left).
	eventually(t, fmt.Sprintf("the lost worker's agent (pid %d) still runs after the next worker started", held), func() bool { return !alive(held) })
	if out, code := run("go", "--db", db, id, "SHIP"); code != 0 {
		t.Fatalf("orch go %s SHIP: exit %d\n%s", id, code, out)
	}
	open(next()) // SHIP's second attempt
	open(next()) // NEXT
	eventually(t, "the run did not complete after orch go (and no follower)", func() bool { return runState(t, run, db, id) == "completed" })
	if a := attempts(id, "SHIP"); len(a) != 2 || a[1].State != "completed" {
		t.Errorf("SHIP's attempts after orch go: %+v", a)
	}

	// 2. kill -9 of orch worker alone: its orch-temporal does not stay.
	w3 := startProc(t, tmp, "worker3", env, proj, orch, "worker", "--root", proj)
	w3child := child(t, w3.cmd.Process.Pid)
	_ = syscall.Kill(w3.cmd.Process.Pid, syscall.SIGKILL)
	eventually(t, fmt.Sprintf("orch-temporal (pid %d) still runs after kill -9 of its orch worker", w3child), func() bool { return !alive(w3child) })

	// 3. SIGTERM to orch worker during a GO drains it: the GO finishes on
	// it, is not run again, and the worker exits 0. worker2 is the only
	// worker at this point.
	w2pid := w2.cmd.Process.Pid
	out, code := run("run", "--engine", "temporal", "--detach", "--db", db, cuelist)
	if code != 0 {
		t.Fatalf("orch run --detach: exit %d\n%s", code, out)
	}
	id2 := runID(t, run, db)
	ship := next()
	_ = syscall.Kill(w2pid, syscall.SIGTERM)
	w2log := filepath.Join(tmp, "worker2.log")
	eventually(t, "orch worker did not start draining on SIGTERM", func() bool {
		b, _ := os.ReadFile(w2log)
		return strings.Contains(string(b), "draining")
	})
	open(ship)
	eventually(t, "the drained orch worker did not exit", func() bool { return !alive(w2pid) })
	startProc(t, tmp, "worker4", env, proj, orch, "worker", "--root", proj)
	open(next()) // NEXT, on worker4
	eventually(t, "run "+id2+" did not complete", func() bool { return runState(t, run, db, id2) == "completed" })
	if a := attempts(id2, "SHIP"); len(a) != 1 || a[0].State != "completed" {
		t.Errorf("SHIP's attempts across the drain: %+v, want one, completed", a)
	}

	// 4. A server restart during a GO: the agent is not killed and runs once.
	out, code = run("run", "--engine", "temporal", "--detach", "--db", db, cuelist)
	if code != 0 {
		t.Fatalf("orch run --detach: exit %d\n%s", code, out)
	}
	id3 := runID(t, run, db)
	ship = next()
	time.Sleep(6 * time.Second) // a heartbeat or so in, not a wait for a result
	server.restart(t)
	time.Sleep(4 * time.Second)
	if !alive(ship) {
		t.Fatalf("the agent (pid %d) was killed by the server's restart", ship)
	}
	open(ship)
	open(next())
	eventually(t, "run "+id3+" did not complete after the server's restart", func() bool { return runState(t, run, db, id3) == "completed" })
	if a := attempts(id3, "SHIP"); len(a) != 1 || a[0].State != "completed" {
		t.Errorf("SHIP's attempts across the server's restart: %+v, want one, completed", a)
	}
}
