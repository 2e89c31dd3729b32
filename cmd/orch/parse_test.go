package main

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// parse builds a command with newCmd and runs its parsing on args, with a
// run function that only captures the options: what the command line
// becomes, without doing anything.
func parse[T any](t *testing.T, newCmd func(*factory, func(*T) error) *cobra.Command, args ...string) *T {
	t.Helper()
	f := newFactory(&streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	var got *T
	cmd := newCmd(f, func(o *T) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%s %q: %v", cmd.Name(), args, err)
	}
	if got == nil {
		t.Fatalf("%s %q: the run function was not called", cmd.Name(), args)
	}
	return got
}

// TestParseCommands: each command's arguments and flags land in its
// options as its run function reads them.
func TestParseCommands(t *testing.T) {
	if o := parse(t, newStatusCmd, "3f9a", "-o", "json", "--tail-lines", "5", "--watch"); o.run != "3f9a" || o.output != "json" || o.tailLines != 5 || !o.watch {
		t.Errorf("status: %+v", o)
	}
	if o := parse(t, newStatusCmd); o.run != "" || o.output != "text" || o.tailLines != defaultTailLines {
		t.Errorf("status with no run (the list): %+v", o)
	}
	if o := parse(t, newGoCmd, "last", "DEPLOY", "--wait", "5s", "--allow-spec-change"); o.run != "last" || o.cue != "DEPLOY" || o.wait != 5*time.Second ||
		!o.allowSpecChange || !slices.Contains(o.unhandled, "--wait") || !slices.Contains(o.unhandled, "--allow-spec-change") {
		t.Errorf("go: %+v", o)
	}
	if o := parse(t, newAnswerCmd, "last", "q2", "use", "postgres"); o.run != "last" || o.qid != "q2" || o.text != "use postgres" || o.wait != 10*time.Second || len(o.unhandled) != 0 {
		t.Errorf("answer: %+v", o)
	}
	if o := parse(t, newAckCmd, "r1", "e42"); o.run != "r1" || o.id != "e42" {
		t.Errorf("ack: %+v", o)
	}
	if o := parse(t, newStopCmd, "r1", "BUILD", "--wait", "1m"); o.run != "r1" || o.cue != "BUILD" || o.wait != time.Minute || !slices.Equal(o.unhandled, []string{"--wait"}) {
		t.Errorf("stop: %+v", o)
	}
	if o := parse(t, newStopCmd, "r1"); o.cue != "" || o.wait != 30*time.Second || len(o.unhandled) != 0 {
		t.Errorf("stop of a run: %+v", o)
	}
	if o := parse(t, newResumeCmd, "r1", "--allow-spec-change", "-o", "json"); o.run != "r1" || !o.allowSpecChange || o.show.output != "json" {
		t.Errorf("resume: %+v", o)
	}
	if o := parse(t, newRetryCmd, "r1", "--rerun", "A", "--rerun", "B", "--dry-run"); o.run != "r1" || !slices.Equal(o.rerun, []string{"A", "B"}) || !o.dryRun {
		t.Errorf("retry: %+v", o)
	}
	if o := parse(t, newEventsCmd, "r1", "-f", "--since", "7"); o.run != "r1" || !o.follow || o.since != 7 {
		t.Errorf("events: %+v", o)
	}
	if o := parse(t, newLogsCmd, "r1", "BUILD", "--tail", "3", "--raw"); o.run != "r1" || o.cue != "BUILD" || o.tail != 3 || !o.raw {
		t.Errorf("logs: %+v", o)
	}
	if o := parse(t, newNotifyModeCmd, "r1", "summary"); o.run != "r1" || o.mode != "summary" {
		t.Errorf("notify-mode: %+v", o)
	}
	if o := parse(t, newLandCmd, "r1", "-o", "json"); o.run != "r1" || o.output != "json" {
		t.Errorf("land: %+v", o)
	}
	if o := parse(t, newRunCmd, "specs/c.yaml", "--set", "a=1", "--max-parallel", "3", "--engine", "temporal", "--temporal-address", "h:1", "--root", "r"); o.path != "specs/c.yaml" ||
		!slices.Equal(o.sets, []string{"a=1"}) || o.maxParallel != 3 || o.root != "r" || o.temporal.engine != "temporal" || !o.temporal.engineSet ||
		o.temporal.address != "h:1" || o.temporal.queue != "orch" || !o.temporal.maxParallelSet || len(o.temporal.unhandled) != 0 {
		t.Errorf("run: %+v", o)
	}
	if o := parse(t, newRunCmd, "c.yaml", "--engine", "temporal", "--stream"); !slices.Equal(o.temporal.unhandled, []string{"--stream"}) {
		t.Errorf("run --stream on Temporal: unhandled %q", o.temporal.unhandled)
	}
	if o := parse(t, newValidateCmd, "a.yaml", "b/", "--strict", "-o", "github"); !slices.Equal(o.paths, []string{"a.yaml", "b/"}) || !o.strict || o.format != "github" {
		t.Errorf("validate: %+v", o)
	}
	if o := parse(t, newPlanCmd, "c.yaml", "-o", "dot"); o.path != "c.yaml" || o.format != "dot" {
		t.Errorf("plan: %+v", o)
	}
	if o := parse(t, newServeCmd, "--addr", "0.0.0.0:1", "--token", "x"); o.addr != "0.0.0.0:1" || o.token != "x" || o.noToken {
		t.Errorf("serve: %+v", o)
	}
	if o := parse(t, newSchemaCmd, "cuelist", "--dir", "d"); !slices.Equal(o.kinds, []string{"cuelist"}) || o.dir != "d" {
		t.Errorf("schema: %+v", o)
	}
	if o := parse(t, newWorkerCmd, "--queue", "gpu"); !slices.Equal(o.argv, []string{"worker", "--queue", "gpu"}) {
		t.Errorf("worker: %+v", o)
	}
}

// TestFactoryResolvesOnce: --db, --sync and --lock-timeout are read once,
// into one Controller every command of the process shares; a bad
// --lock-timeout is a usage error, from the first command that asks.
func TestFactoryResolvesOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	f := newFactory(&streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	defer f.close()
	root := newRootCmd(f)
	if err := root.ParseFlags([]string{"--db", db, "--sync", "full"}); err != nil {
		t.Fatal(err)
	}
	a, err := f.Controller()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.Controller()
	if a != b || a.Path() != db || !a.Named() {
		t.Errorf("Controller: %p %p, path %q (named %v), want one, on %s", a, b, a.Path(), a.Named(), db)
	}

	t.Setenv("ORCH_DB", "")
	f = newFactory(&streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	root = newRootCmd(f)
	if err := root.ParseFlags([]string{"--lock-timeout", "0s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Controller(); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--lock-timeout 0s") {
		t.Errorf("--lock-timeout 0s: %v (exit %d), want a usage error", err, exitCode(err))
	}
}
