//go:build temporal_e2e && linux

package temporal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTemporalLongRunContinuesAsNew: a chain of cues long enough that its
// workflow continues as new several times (the server suggests it every
// 4,096 history events, about 650 cues) completes, and orch status of the
// run, started with --detach and followed by nobody, brings the store up to
// date across the executions: every cue completed once, one seq numbering.
// ORCH_E2E_LONG_CUES sets the length (default 2000, a minute or two; CI runs
// the 20,000, about ten on a quiet 2-core machine).
func TestTemporalLongRunContinuesAsNew(t *testing.T) {
	cues := 2000
	if s := os.Getenv("ORCH_E2E_LONG_CUES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("ORCH_E2E_LONG_CUES=%q: not a number of cues", s)
		}
		cues = n
	}
	root := repoRoot(t)
	tmp := t.TempDir()
	orch := buildOrch(t, root, tmp)
	server := startDevServer(t, root, tmp)
	proj := filepath.Join(tmp, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("agent:\n  id: step\n  command: [/bin/true]\n  protocol: none\n---\ncuelist:\n  id: long\n  max_parallel: 1\n  cues:\n")
	for i := range cues {
		fmt.Fprintf(&b, "    - id: C%d\n      agents: [step]\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "      dependencies: [C%d]\n", i-1)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, "long.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+server.addr,
		"PATH="+filepath.Dir(orch)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ORCH_ENGINE=", "ORCH_DB=")
	run := orchIn(t, orch, proj, env)
	for i := 1; i <= 2; i++ {
		startProc(t, tmp, fmt.Sprintf("worker%d", i), env, proj, orch, "worker", "--root", proj)
	}
	db := filepath.Join(tmp, "temporal.db")
	if out, code := run("run", "--engine", "temporal", "--detach", "--db", db, "long.yaml"); code != 0 {
		t.Fatalf("orch run --detach: exit %d\n%s", code, out)
	}
	id := runID(t, run, db)

	// Nobody follows: orch status catches the store up when read.
	deadline := time.Now().Add(2*time.Minute + time.Duration(cues)*120*time.Millisecond)
	for state := ""; !ended(state); state = runState(t, run, db, id) {
		if time.Now().After(deadline) {
			out, _ := run("status", "--db", db, id)
			t.Fatalf("run %s of %d cues not over after %s (state %q)\n%s", id, cues, time.Until(deadline), state, out)
		}
		time.Sleep(5 * time.Second)
	}
	if state := runState(t, run, db, id); state != "completed" {
		out, _ := run("status", "--db", db, id)
		t.Fatalf("run %s: %s, want completed\n%s", id, state, out)
	}

	out, code := run("events", "--db", db, id, "--output", "json")
	if code != 0 {
		t.Fatalf("orch events: exit %d\n%s", code, out)
	}
	completed := map[string]int{}
	executions := 1
	seq := int64(0)
	for line := range strings.Lines(out) {
		var ev struct {
			Seq    int64
			Type   string
			Cue    string
			State  string
			Reason string
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("orch events line %q: %v", line, err)
		}
		if ev.Seq != seq+1 {
			t.Fatalf("event seq %d after %d: the store lost or repeated events across the executions", ev.Seq, seq)
		}
		seq = ev.Seq
		switch {
		case ev.Type == "cue/state" && ev.State == "completed":
			completed[ev.Cue]++
		case ev.Type == "note" && strings.Contains(ev.Reason, "continue-as-new"):
			executions++
		}
	}
	if len(completed) != cues {
		t.Fatalf("%d cues completed, want %d", len(completed), cues)
	}
	for cue, n := range completed {
		if n != 1 {
			t.Fatalf("cue %s completed %d times", cue, n)
		}
	}
	if executions < 2 {
		t.Fatalf("the run's workflow never continued as new (%d cues, %d events)", cues, seq)
	}
	t.Logf("run %s: %d cues, %d events, %d executions of its workflow", id, cues, seq, executions)
}
