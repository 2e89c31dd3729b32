package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestOrchDoesNotLinkTemporal: the Temporal client lives in orch-temporal;
// orch itself links neither go.temporal.io nor, but for the OpenTelemetry
// SDK's OTLP exporters (which send over gRPC and HTTP/protobuf), gRPC and
// protobuf.
func TestOrchDoesNotLinkTemporal(t *testing.T) {
	deps := func(pkgs ...string) []string {
		out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", pkgs, err)
		}
		return strings.Fields(string(out))
	}
	exporters := map[string]bool{}
	for _, dep := range deps("go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc", "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp") {
		exporters[dep] = true
	}
	for _, dep := range deps(".") {
		if strings.HasPrefix(dep, "go.temporal.io/") ||
			(strings.HasPrefix(dep, "google.golang.org/grpc") || strings.HasPrefix(dep, "google.golang.org/protobuf")) && !exporters[dep] {
			t.Errorf("cmd/orch links %s", dep)
		}
	}
}

// TestRunTemporalWithoutOrchTemporal: with no orch-temporal next to orch nor
// on PATH, orch run --engine temporal says how to install it (exit 2): a
// build of a clone (version dev) is told to build it there, never to go
// install @dev, which fails.
func TestRunTemporalWithoutOrchTemporal(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errOut bytes.Buffer
	code := run([]string{"run", "--engine", "temporal", "x.yaml"}, &streams{in: strings.NewReader(""), out: &out, err: &errOut})
	msg := errOut.String()
	if code != exitUsage || !strings.Contains(msg, "needs orch-temporal") || !strings.Contains(msg, "go build -o ") || !strings.Contains(msg, " ./cmd/orch-temporal") || strings.Contains(msg, "@dev") {
		t.Fatalf("exit %d: %s", code, msg)
	}
}

// fakeTemporal puts an orch-temporal on PATH that records its arguments,
// one a line, and exits with $FAKE_EXIT (default 0). It returns a function
// reading the arguments of its last call.
func fakeTemporal(t *testing.T) func() []string {
	t.Helper()
	bin, rec := t.TempDir(), filepath.Join(t.TempDir(), "argv")
	script := "#!/bin/sh\n: > \"$FAKE_ARGV\"\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> \"$FAKE_ARGV\"; done\nprintf '%s' \"$TEMPORAL_API_KEY\" > \"$FAKE_ARGV.key\"\nexit ${FAKE_EXIT:-0}\n"
	if err := os.WriteFile(filepath.Join(bin, "orch-temporal"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_ARGV", rec)
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("TEMPORAL_NAMESPACE", "")
	t.Setenv("ORCH_ENGINE", "")
	return func() []string {
		b, err := os.ReadFile(rec)
		if err != nil {
			return nil
		}
		_ = os.Remove(rec) // the next call's, or none
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
}

// recordTemporalRun records a run on Temporal (run.started with its
// temporal block) in a new database and returns the database's path.
func recordTemporalRun(t *testing.T, id string) string {
	t.Helper()
	dbFile := filepath.Join(t.TempDir(), "orch.db")
	db, err := store.Open(dbFile, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Append(context.Background(), record.Event{RunID: id, Type: record.EvRunStarted, Data: record.RunStartedData{
		Cuelist: "deploy", SpecPath: "/p/examples/deploy/cuelist.yaml", Cues: []record.CueInfo{{ID: "CUE-300", Agents: []string{"deployer"}, Manual: true}},
		Temporal: &record.TemporalRun{Address: "10.0.0.5:7233", Namespace: "team", TaskQueue: "q1", WorkflowID: "orch-" + id, Path: "examples/deploy/cuelist.yaml"}}})
	if err != nil {
		t.Fatal(err)
	}
	return dbFile
}

// TestHandOverToOrchTemporal: orch run --engine temporal (global flags
// first too), orch worker, and orch go, answer, stop, bb set, resume and
// notify-mode on a run recorded on Temporal exec orch-temporal with the
// resolved database and the run's recorded address, namespace and task
// queue.
func TestHandOverToOrchTemporal(t *testing.T) {
	fixedRunID(t, "0123456789ab")
	argv := fakeTemporal(t)
	const id = "20261123-aaaa"
	dbFile := recordTemporalRun(t, id)
	recorded := []string{"--db", dbFile, "--temporal-address", "10.0.0.5:7233", "--temporal-namespace", "team", "--task-queue", "q1"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{args: []string{"--db", dbFile, "run", "--engine", "temporal", "x.yaml"},
			want: []string{"run", "--db", dbFile, "--temporal-address", "127.0.0.1:7233", "--temporal-namespace", "default", "--task-queue", "orch", "--run-id", "0123456789ab", "--", "x.yaml"}},
		{args: []string{"run", "x.yaml", "--db", dbFile, "--set", "a=1", "--set", "b=2", "--max-parallel", "3", "--root", "/srv/p", "--detach", "--task-queue", "gpu"},
			env:  map[string]string{"ORCH_ENGINE": "temporal", "TEMPORAL_ADDRESS": "h:1", "TEMPORAL_NAMESPACE": "ns"},
			want: []string{"run", "--db", dbFile, "--temporal-address", "h:1", "--temporal-namespace", "ns", "--task-queue", "gpu", "--set", "a=1", "--set", "b=2", "--max-parallel", "3", "--root", "/srv/p", "--detach", "--", "x.yaml"}},
		{args: []string{"--db", dbFile, "worker", "--queue", "gpu", "--max-concurrent", "2", "--drain-grace", "5m"},
			want: []string{"worker", "--db", dbFile, "--drain-grace", "5m0s", "--max-concurrent", "2", "--queue", "gpu"}},
		{args: []string{"--db", dbFile, "worker", "--git-remote", "/srv/remote.git"},
			want: []string{"worker", "--db", dbFile, "--git-remote", "/srv/remote.git"}},
		{args: []string{"--db", dbFile, "run", "--engine", "temporal", "--git-remote", "/srv/remote.git", "x.yaml"},
			want: []string{"run", "--db", dbFile, "--temporal-address", "127.0.0.1:7233", "--temporal-namespace", "default", "--task-queue", "orch", "--git-remote", "/srv/remote.git", "--run-id", "0123456789ab", "--", "x.yaml"}},
		{args: []string{"--db", dbFile, "go", "last", "CUE-300"}, want: cat([]string{"go"}, recorded, []string{"--", id, "CUE-300"})},
		{args: []string{"go", "--db", dbFile, "2026", "CUE-300"}, want: cat([]string{"go"}, recorded, []string{"--", id, "CUE-300"})},
		{args: []string{"--db", dbFile, "answer", id, "q1", "yes,", "ship", "it"}, want: cat([]string{"answer"}, recorded, []string{"--", id, "q1", "yes, ship it"})},
		{args: []string{"--db", dbFile, "stop", id}, want: cat([]string{"stop"}, recorded, []string{"--", id})},
		{args: []string{"--db", dbFile, "stop", id, "CUE-300"}, want: cat([]string{"stop"}, recorded, []string{"--", id, "CUE-300"})},
		{args: []string{"--db", dbFile, "bb", "set", "--run", id, "plan", `{"steps": 3}`}, want: cat([]string{"bb", "set"}, recorded, []string{"--", id, "plan", `{"steps":3}`})},
		{args: []string{"--db", dbFile, "bb", "set", "--string", "version", "1.10"}, want: cat([]string{"bb", "set"}, recorded, []string{"--", id, "version", `"1.10"`})},
		{args: []string{"--db", dbFile, "resume", "last"}, want: cat([]string{"resume"}, recorded, []string{"--", id})},
		{args: []string{"--db", dbFile, "notify-mode", "last", "summary"}, want: cat([]string{"notify-mode"}, recorded, []string{"--", id, "summary"})},
		{args: []string{"--db", dbFile, "notify-mode", id, "CUE-300", "silent"}, want: cat([]string{"notify-mode"}, recorded, []string{"--", id, "CUE-300", "silent"})},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		var out, errOut bytes.Buffer
		code := run(tc.args, &streams{in: strings.NewReader(""), out: &out, err: &errOut})
		if code != 0 {
			t.Errorf("orch %q: exit %d: %s", tc.args, code, errOut.String())
		} else if got := argv(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("orch %q ran orch-temporal\n %q\nwant\n %q", tc.args, got, tc.want)
		}
		for k := range tc.env {
			t.Setenv(k, "")
		}
	}
}

// TestHandOverExitCode: orch exits with orch-temporal's code (3: waiting
// for a person), printing nothing more.
func TestHandOverExitCode(t *testing.T) {
	fakeTemporal(t)
	t.Setenv("FAKE_EXIT", "3")
	var out, errOut bytes.Buffer
	code := run([]string{"run", "--engine=temporal", "--db", filepath.Join(t.TempDir(), "o.db"), "x.yaml"}, &streams{in: strings.NewReader(""), out: &out, err: &errOut})
	if code != exitPaused || errOut.String() != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

// TestHandOverRefusesFlags: flags orch-temporal does not take are refused
// by orch with one message naming them (exit 2), and orch-temporal is not
// run; so is an unknown engine.
func TestHandOverRefusesFlags(t *testing.T) {
	argv := fakeTemporal(t)
	const id = "20261123-bbbb"
	dbFile := recordTemporalRun(t, id)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--engine", "temporal", "--stream", "--output", "json", "x.yaml"},
			"orch run --engine temporal runs on Temporal (through orch-temporal), which does not take --output, --stream in this version: leave them out, or run it with --engine local"},
		{[]string{"--sync", "full", "run", "--engine", "temporal", "x.yaml"}, "which does not take --sync in this version: leave it out, or run it with --engine local"},
		{[]string{"run", "--engine", "argo", "x.yaml"}, `unknown engine "argo" (want local or temporal)`},
		{[]string{"--db", dbFile, "stop", id, "--wait", "1m"}, "orch stop: run " + id + " runs on Temporal (through orch-temporal), which does not take --wait in this version: leave it out"},
		{[]string{"--db", dbFile, "go", id, "CUE-300", "--allow-spec-change"}, "which does not take --allow-spec-change"},
		{[]string{"--db", dbFile, "bb", "set", "--if-version", "2", "k", "v"}, "which does not take --if-version"},
		{[]string{"--db", dbFile, "answer", "--wait", "1s", id, "q1", "yes"}, "which does not take --wait"},
		{[]string{"--db", dbFile, "retry", id}, "run " + id + " runs on Temporal (workflow orch-" + id + "): orch retry is not supported there in this version"},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &streams{in: strings.NewReader(""), out: &out, err: &errOut})
		if code != exitUsage || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("orch %q: exit %d, stderr %q, want exit 2 with %q", tc.args, code, errOut.String(), tc.want)
		}
		if got := argv(); got != nil {
			t.Errorf("orch %q ran orch-temporal %q", tc.args, got)
		}
	}
}

// TestHandOverChecksTheGo: orch go on a run on Temporal refuses, as for a
// local run, a cue the run does not have or that is over (exit 2), without
// sending anything (orch-temporal sync, which brings the store up to date
// before the check, sends nothing).
func TestHandOverChecksTheGo(t *testing.T) {
	argv := fakeTemporal(t)
	const id = "20261123-cccc"
	dbFile := recordTemporalRun(t, id)
	db, err := store.Open(dbFile, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Append(context.Background(), record.Event{RunID: id, Type: record.EvCueState, Cue: "CUE-300", State: string(record.CueCompleted)})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cue, want string }{
		{"CUE-999", `run ` + id + ` has no cue "CUE-999"`},
		{"CUE-300", "cue CUE-300 of run " + id + " is already completed"},
	} {
		var out, errOut bytes.Buffer
		code := run([]string{"--db", dbFile, "go", id, tc.cue}, &streams{in: strings.NewReader(""), out: &out, err: &errOut})
		if code != exitUsage || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("orch go %s: exit %d, stderr %q, want %q", tc.cue, code, errOut.String(), tc.want)
		}
		if got := argv(); got != nil && got[0] != "sync" {
			t.Errorf("orch go %s ran orch-temporal %q", tc.cue, got)
		}
	}
}

// TestServeHandsOverTemporalRuns: orch serve's GO, stop, answer and retry
// on a run on Temporal do what the orch command does (hand over to
// orch-temporal, or refuse), never continue the run locally.
func TestServeHandsOverTemporalRuns(t *testing.T) {
	argv := fakeTemporal(t)
	const id = "20261123-dddd"
	dbFile := recordTemporalRun(t, id)
	srv := serveDB(t, dbFile, "")
	recorded := []string{"--db", dbFile, "--temporal-address", "10.0.0.5:7233", "--temporal-namespace", "team", "--task-queue", "q1"}
	for _, tc := range []struct {
		path, body string
		code       int
		want       []string
		msg        string
	}{
		{"go", `{"cue":"CUE-300"}`, 200, append(append([]string{"go"}, recorded...), "--", id, "CUE-300"), ""},
		{"go", `{"cue":"NOPE"}`, 400, nil, `has no cue \"NOPE\"`},
		{"stop", "", 200, append(append([]string{"stop"}, recorded...), "--", id), ""},
		{"stop", `{"cue":"CUE-300"}`, 200, append(append([]string{"stop"}, recorded...), "--", id, "CUE-300"), ""},
		{"answer", `{"question":"q1","answer":"yes"}`, 200, append(append([]string{"answer"}, recorded...), "--", id, "q1", "yes"), ""},
		{"retry", "", 400, nil, "orch retry is not supported there in this version"},
	} {
		code, body := post(t, srv.URL+"/api/runs/"+id+"/"+tc.path, tc.body)
		got := argv()
		if len(got) > 0 && got[0] == "sync" { // the store brought up to date: nothing sent
			got = nil
		}
		if code != tc.code || !strings.Contains(body, tc.msg) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("POST %s %s: %d %s, ran orch-temporal %q\nwant %d with %q, %q", tc.path, tc.body, code, body, got, tc.code, tc.msg, tc.want)
		}
	}
}

// TestStatusOfATemporalRunCatchesUp: orch status of a Temporal run that has
// not ended first has orch-temporal sync bring the store up to date; one
// that does not answer (a server down) is given up after a bound, and the
// status is the store's.
func TestStatusOfATemporalRunCatchesUp(t *testing.T) {
	argv := fakeTemporal(t)
	const id = "20261123-eeee"
	dbFile := recordTemporalRun(t, id)
	var out, errOut bytes.Buffer
	if code := run([]string{"--db", dbFile, "status", id}, &streams{in: strings.NewReader(""), out: &out, err: &errOut}); code != 0 {
		t.Fatalf("orch status: exit %d: %s", code, errOut.String())
	}
	if got := argv(); len(got) == 0 || got[0] != "sync" || got[len(got)-1] != id {
		t.Errorf("orch status ran orch-temporal %q, want sync ... %s", got, id)
	}
	// An orch-temporal that never returns.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "orch-temporal"), []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"--db", dbFile, "status", id}, &streams{in: strings.NewReader(""), out: &out, err: &errOut})
	}()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("orch status with a hung orch-temporal: exit %d: %s", code, errOut.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("orch status waited for a hung orch-temporal")
	}
}
