//go:build temporal_e2e && linux

package temporal

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/testtls"
)

// clusterProject is a cuelist whose run fails (BAD exits 1) and one whose
// run waits in a GO until stopped.
func clusterProject(t *testing.T, tmp string) string {
	t.Helper()
	proj := filepath.Join(tmp, "cluster-proj")
	files := map[string]string{
		"fails.yaml": `cuelist:
  id: fails
  include: [agents/*.yaml]
  cues:
    - {id: OK, agents: [ok]}
    - {id: BAD, agents: [bad], dependencies: [OK]}
`,
		"waits.yaml": `cuelist:
  id: waits
  include: [agents/*.yaml]
  cues:
    - {id: LONG, agents: [long]}
`,
		"agents/ok.yaml":   "agent: {id: ok, command: [sh, -c, 'echo key=${TEMPORAL_API_KEY:-none}'], protocol: none, workdir: .}\n",
		"agents/bad.yaml":  "agent: {id: bad, command: [\"false\"], protocol: none, workdir: .}\n",
		"agents/long.yaml": "agent: {id: long, command: [sleep, \"300\"], protocol: none, workdir: .}\n",
	}
	writeFiles(t, proj, files)
	return proj
}

// TestTemporalCluster runs orch on a secured cluster: mTLS and an API key
// (a proxy in front of the dev server checks both on every call). orch
// worker takes the key from $TEMPORAL_API_KEY, orch run from --api-key;
// orch stop and status of a run reach it later with no flags (the TLS files
// are recorded, the key comes from the environment). In Temporal, the
// failed run's workflow is Failed and the stopped one's Canceled, each with
// its memo and search attributes (temporal workflow list --query finds
// them by state), and the worker is orch-worker@host:pid. The key is in no
// output, log or database.
func TestTemporalCluster(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	orch := buildOrch(t, root, tmp)
	server := startDevServer(t, root, tmp)
	const key = "tk-9c41e0-secret"
	cluster := startSecuredCluster(t, server.addr, key)
	proj := clusterProject(t, tmp)
	certs := cluster.certs
	env := append(os.Environ(), "TEMPORAL_ADDRESS="+cluster.addr,
		"PATH="+filepath.Dir(orch)+string(os.PathListSeparator)+os.Getenv("PATH"), "ORCH_ENGINE=", "ORCH_DB=", "TEMPORAL_API_KEY=")
	tlsFlags := []string{"--tls-ca", certs.CA, "--tls-cert", certs.ClientCert, "--tls-key", certs.ClientKey, "--tls-server-name", testtls.ServerName}
	workerEnv := append(append([]string(nil), env...), "TEMPORAL_API_KEY="+key)
	startProc(t, tmp, "worker", workerEnv, proj, append([]string{orch, "worker", "--root", proj}, tlsFlags...)...)
	run := orchIn(t, orch, proj, env)
	db := filepath.Join(tmp, "cluster.db")

	out, code := run(append(append([]string{"run", "--engine", "temporal", "--db", db, "--api-key", key}, tlsFlags...), "fails.yaml")...)
	if code != 1 || !strings.Contains(out, "failed") {
		t.Fatalf("orch run of a failing cuelist on the secured cluster: exit %d, want 1\n%s", code, out)
	}
	failed := runID(t, run, db)
	// Followed, it prints the local engine's plain progress lines.
	for _, line := range []string{"run " + failed + " started: cuelist fails, 2 cues", "OK attempt 1: ok completed", "BAD attempt 1: bad failed", "run failed"} {
		if !strings.Contains(out, line) {
			t.Errorf("no progress line %q in orch run's output:\n%s", line, out)
		}
	}
	// The worker's agents do not inherit its API key.
	if logs, code := run("logs", "--db", db, failed, "OK"); code != 0 || !strings.Contains(logs, "key=none") {
		t.Errorf("orch logs of OK: exit %d, want key=none (the agent had no API key)\n%s", code, logs)
	}
	if strings.Index(out, "run failed: failed: BAD") > strings.Index(out, "orch: run "+failed+" failed") {
		t.Errorf("the end line comes before the last progress lines:\n%s", out)
	}

	// Steering and status with no flags: the recorded TLS files, the key
	// from the environment.
	steer := orchIn(t, orch, proj, workerEnv)
	out, code = steer(append(append([]string{"run", "--engine", "temporal", "--db", db, "--detach"}, tlsFlags...), "waits.yaml")...)
	if code != 0 {
		t.Fatalf("orch run --detach: exit %d\n%s", code, out)
	}
	stopped := runID(t, steer, db)
	if stopped == failed {
		t.Fatalf("orch run --detach recorded no new run\n%s", out)
	}
	eventually(t, "LONG is in GO", func() bool {
		out, _ := steer("status", "--db", db, "--output", "json", stopped)
		return strings.Contains(out, "attempt")
	})
	// orch resume follows it again, printing the progress lines from then
	// on; orch stop (no flags) ends it: resume exits 130.
	workerEnvNoKey := append(append([]string(nil), workerEnv...), "ORCH_DB="+db)
	resume := startProc(t, tmp, "resume", workerEnvNoKey, proj, orch, "resume", stopped)
	follower := child(t, resume.cmd.Process.Pid)
	eventually(t, "orch resume follows the run", func() bool {
		var st struct{ Owner struct{ PID int } }
		out, _ := steer("status", "--db", db, "--output", "json", stopped)
		return json.Unmarshal([]byte(out), &st) == nil && st.Owner.PID == follower
	})
	if out, code := steer("stop", "--db", db, stopped); code != 0 {
		t.Fatalf("orch stop with no flags: exit %d\n%s", code, out)
	}
	if code := resume.wait(t); code != 130 {
		t.Errorf("orch resume of a run stopped meanwhile: exit %d, want 130", code)
	}
	if b, _ := os.ReadFile(resume.log); !strings.Contains(string(b), "LONG attempt 1: long stopped") || !strings.Contains(string(b), "run stopped") ||
		strings.Contains(string(b), "started: cuelist waits") {
		t.Errorf("orch resume's progress lines (from when it started):\n%s", b)
	}
	if runState(t, steer, db, stopped) != "stopped" {
		t.Errorf("the stopped run does not read stopped in orch status")
	}

	// What Temporal shows, read from the dev server directly.
	tcli := temporalCLI(t)
	describe := func(id string) map[string]any {
		t.Helper()
		var d map[string]any
		eventually(t, "workflow orch-"+id+" closed", func() bool {
			b, err := exec.Command(tcli, "workflow", "describe", "--address", server.addr, "-w", "orch-"+id, "-o", "json").Output()
			if err != nil || json.Unmarshal(b, &d) != nil {
				return false
			}
			return !strings.Contains(string(b), "WORKFLOW_EXECUTION_STATUS_RUNNING")
		})
		return d
	}
	for id, want := range map[string]string{failed: "FAILED", stopped: "CANCELED"} {
		d := describe(id)
		b, _ := json.Marshal(d)
		s := string(b)
		if !strings.Contains(s, "WORKFLOW_EXECUTION_STATUS_"+want) {
			t.Errorf("workflow of run %s: want %s\n%s", id, want, s)
		}
		for _, attr := range []string{"OrchCuelist", "OrchRun", "OrchState", `"memo"`} {
			if !strings.Contains(s, attr) {
				t.Errorf("workflow of run %s has no %s\n%s", id, attr, s)
			}
		}
	}
	list := func(query string) string {
		b, err := exec.Command(tcli, "workflow", "list", "--address", server.addr, "--query", query, "-o", "json").CombinedOutput()
		if err != nil {
			t.Fatalf("temporal workflow list --query %s: %v\n%s", query, err, b)
		}
		return string(b)
	}
	eventually(t, "temporal workflow list finds the failed run by its state", func() bool {
		return strings.Contains(list(`OrchState="failed" AND OrchCuelist="fails"`), "orch-"+failed)
	})
	eventually(t, "temporal workflow list finds the stopped run by its id and state", func() bool {
		return strings.Contains(list(`OrchRun="`+stopped+`" AND OrchState="stopped"`), "orch-"+stopped)
	})
	b, err := exec.Command(tcli, "task-queue", "describe", "--address", server.addr, "--task-queue", "orch", "-o", "json").CombinedOutput()
	if err != nil || !strings.Contains(string(b), "orch-worker@") {
		t.Errorf("the worker's identity is not orch-worker@host:pid: %v\n%s", err, b)
	}

	// A run nobody followed, read after its workflow closed Failed: the
	// store catches up from the closed workflow (queries still answer),
	// and orch resume exits as the run ended.
	if out, code := steer(append(append([]string{"run", "--engine", "temporal", "--db", db, "--detach"}, tlsFlags...), "fails.yaml")...); code != 0 {
		t.Fatalf("orch run --detach: exit %d\n%s", code, out)
	}
	late := runID(t, steer, db)
	if d, _ := json.Marshal(describe(late)); !strings.Contains(string(d), "WORKFLOW_EXECUTION_STATUS_FAILED") {
		t.Fatalf("workflow of run %s: want FAILED\n%s", late, d)
	}
	if st := runState(t, steer, db, late); st != "failed" {
		t.Errorf("orch status of a run whose workflow closed unfollowed: %s, want failed", st)
	}
	if out, code := steer("resume", "--db", db, late); code != 1 {
		t.Errorf("orch resume of a failed run: exit %d, want 1\n%s", code, out)
	}

	// Every call carried the key; the key is nowhere it could leak.
	cluster.mu.Lock()
	calls, bad := cluster.calls, cluster.bad
	cluster.mu.Unlock()
	if calls == 0 || len(bad) > 0 {
		t.Errorf("%d calls through the secured frontend, without the key: %v", calls, bad)
	}
	for _, f := range append(filesIn(t, tmp, ".log"), db, db+"-wal") {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), key) {
			t.Errorf("the API key is in %s", f)
		}
	}
}

// temporalCLI is the Temporal CLI temporal-dev.sh built.
func temporalCLI(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "temporal-dev.sh"), "build").Output()
	if err != nil {
		t.Fatalf("temporal-dev.sh build: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// filesIn are the files below dir whose names end in suffix.
func filesIn(t *testing.T, dir, suffix string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasSuffix(p, suffix) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestTemporalWithoutSearchAttributes: on a namespace without orch's
// search attributes a run starts without them, with one note saying how to
// create them, and runs as usual (its workflow never upserts one).
func TestTemporalWithoutSearchAttributes(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	orch := buildOrch(t, root, tmp)
	server := startDevServer(t, root, tmp, "--no-search-attributes")
	proj := clusterProject(t, tmp)
	env := append(os.Environ(), "TEMPORAL_ADDRESS="+server.addr,
		"PATH="+filepath.Dir(orch)+string(os.PathListSeparator)+os.Getenv("PATH"), "ORCH_ENGINE=", "ORCH_DB=")
	startProc(t, tmp, "worker", env, proj, orch, "worker", "--root", proj)
	run := orchIn(t, orch, proj, env)
	db := filepath.Join(tmp, "plain.db")
	out, code := run("run", "--engine", "temporal", "--db", db, "fails.yaml")
	if code != 1 || strings.Count(out, "has no search attributes OrchCuelist, OrchRun, OrchState") != 1 ||
		!strings.Contains(out, "temporal operator search-attribute create") {
		t.Fatalf("orch run on a namespace without the search attributes: exit %d, want 1 and one note\n%s", code, out)
	}
	if st := runState(t, run, db, runID(t, run, db)); st != "failed" {
		t.Fatalf("state %s", st)
	}
}
