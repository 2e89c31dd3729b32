package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

func runCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "run CUELIST", Short: "Start a cuelist's run on Temporal and follow it into the local store", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTemporal(cmd, args[0]) }}
	cmd.Flags().StringArray("set", nil, "set a run input: NAME=VALUE")
	cmd.Flags().String("root", ".", "the project checkout: the workers find the cuelist at the same path below their --root")
	cmd.Flags().Bool("detach", false, "start the run, print its id and how to follow it, and exit")
	cmd.Flags().Int("max-parallel", 0, "cues prepared and in GO at once (default: the cuelist's max_parallel)")
	cmd.Flags().String("git-remote", "", "worktree agents: the git remote the workers share their branches through (default $ORCH_GIT_REMOTE)")
	cmd.Flags().String("run-id", "", "the new run's id (12 hex digits; orch chooses it to print the run's progress)")
	_ = cmd.Flags().MarkHidden("run-id")
	return cmd
}

func runTemporal(cmd *cobra.Command, path string) error {
	ctx := context.Background()
	rootFlag, _ := cmd.Flags().GetString("root")
	root, err := filepath.Abs(rootFlag)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(path)
	rel, err := filepath.Rel(root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return &exitError{code: 2, msg: fmt.Sprintf("%s is not below --root %s: the workers find the cuelist by its path below their --root", path, root)}
	}
	set, p, diags, err := planner.Compile(abs, "", spec.LoadOptions{Root: root})
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	if p == nil {
		return &exitError{code: 2, msg: fmt.Sprintf("%s has errors:\n%v", path, diags)}
	}
	git, err := runGit(cmd, root, p)
	if err != nil {
		return err
	}
	inputs := map[string]any{}
	for k, v := range p.Cuelist.Inputs {
		inputs[k] = v
	}
	sets, _ := cmd.Flags().GetStringArray("set")
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return &exitError{code: 2, msg: fmt.Sprintf("--set %q: want NAME=VALUE", s)}
		}
		inputs[k] = v
	}
	db, dbFile, err := openStore(cmd, abs)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := refuseCrossRunCooldown(ctx, db, p, time.Now()); err != nil {
		return err
	}
	c, err := dial(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	queue, _ := cmd.Flags().GetString("task-queue")
	addr, _ := cmd.Flags().GetString("temporal-address")
	ns, _ := cmd.Flags().GetString("temporal-namespace")
	maxPar, _ := cmd.Flags().GetInt("max-parallel")
	id := record.NewRunID()
	if given, _ := cmd.Flags().GetString("run-id"); given != "" {
		if !runIDPattern.MatchString(given) {
			return &exitError{code: 2, msg: fmt.Sprintf("--run-id %q: want 12 hex digits", given)}
		}
		id = given
	}
	wfID := "orch-" + id
	host, _ := os.Hostname()
	data := record.RunStartedData{Cuelist: p.Cuelist.ID, SpecPath: abs, SpecHash: set.HashBelow(root), Root: root, Inputs: inputs,
		OwnerPID: os.Getpid(), OwnerHost: host, OwnerToken: record.NewRunID() + record.NewRunID(),
		Temporal: recordedConnection(cmd, &record.TemporalRun{Address: addr, Namespace: ns, TaskQueue: queue, WorkflowID: wfID, Path: filepath.ToSlash(rel)})}
	if git != nil {
		data.Temporal.GitRemote, data.Temporal.GitRepo = git.Remote, git.Repo
	}
	// The run's inputs go into the workflow's history and the store masked,
	// as a local run records them; the workers put the values back for the
	// agents. The plan's secret names are kept for whoever follows later.
	mask := redact.ForPlan(p)
	data.Temporal.Secrets = redact.Declared(p)
	data.Inputs = mask.Object(inputs)
	for _, cu := range p.Order {
		data.Cues = append(data.Cues, record.CueInfo{ID: cu.ID, Agents: cu.Agents, After: cu.WaitsFor(), Manual: cu.Manual()})
	}
	// Recorded first, like a local run: seq 1, then the workflow's events.
	started := []record.Event{{RunID: id, Type: record.EvRunStarted, Data: data}}
	record.Redact(mask, started)
	if err := db.Append(ctx, started[0]); err != nil {
		return fmt.Errorf("recording run %s in %s: %w", id, dbFile, err)
	}
	in := temporal.RunInput{RunID: id, Path: filepath.ToSlash(rel), SpecHash: data.SpecHash, Inputs: data.Inputs, MaxParallel: maxPar, TaskQueue: queue, Git: git}
	if in.Memory, _, err = db.MemoryList(ctx, temporal.MemorySnapshotMax); err != nil { // what its agents may search
		return err
	}
	if err := startWorkflow(ctx, c, client.StartWorkflowOptions{ID: wfID, TaskQueue: queue}, in, p.Cuelist.ID, ns, os.Stderr); err != nil {
		_ = db.Append(ctx, record.Event{RunID: id, Type: record.EvRunState, State: string(record.RunFailed), Reason: "could not start its workflow: " + err.Error()})
		return &exitError{code: 1, msg: fmt.Sprintf("starting the workflow of run %s on %s: %v", id, addr, err)}
	}
	fmt.Fprintf(os.Stderr, "run %s on Temporal (workflow %s, task queue %s)\n", id, wfID, queue)
	if detach, _ := cmd.Flags().GetBool("detach"); detach {
		fmt.Println(id)
		fmt.Fprintf(os.Stderr, "follow it with: orch resume %s   (status: orch status %s)\n", id, id)
		return nil
	}
	return followUntilDone(&follower{c: c, db: db, id: id, wfID: wfID, token: data.OwnerToken, gitRemote: data.Temporal.GitRemote, gitRepo: data.Temporal.GitRepo, mask: mask})
}

// runIDPattern is a run's id: 12 hex digits.
var runIDPattern = regexp.MustCompile(`^[0-9a-f]{12}$`)

// followUntilDone follows the run until it ends or waits for a person;
// Ctrl-C detaches the follower and leaves the workflow running (orch
// resume re-attaches; orch stop stops it).
func followUntilDone(f *follower) error {
	id := f.id
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	state, reason, err := f.follow(ctx)
	if ctx.Err() != nil {
		return &exitError{code: 130, msg: fmt.Sprintf("detached from run %s; its workflow goes on (orch resume %s follows it again, orch stop %s stops it)", id, id, id)}
	}
	if err != nil {
		return err
	}
	switch state {
	case record.RunCompleted:
		f.fetchBranches()
		fmt.Fprintf(os.Stderr, "run %s completed\n", id)
		return nil
	case record.RunPaused:
		return &exitError{code: 3, msg: pausedLine(id, reason)}
	case record.RunStopped: // README: 130 stopped, as a local run's
		return &exitError{code: 130, msg: fmt.Sprintf("run %s stopped: %s", id, reason)}
	}
	return &exitError{code: 1, msg: fmt.Sprintf("run %s %s: %s", id, state, reason)}
}

// pausedLine is the end line of a run that waits for a person: the
// commands that continue it, a cue at a time (its workflow acts on orch go
// at once: no orch resume is needed).
func pausedLine(id, reason string) string {
	cues, ok := strings.CutPrefix(reason, temporal.WaitingPrefix)
	if !ok || cues == "" {
		return fmt.Sprintf("run %s: %s", id, reason)
	}
	var next []string
	for _, c := range strings.Split(cues, ", ") {
		next = append(next, fmt.Sprintf("orch go %s %s", id, c))
	}
	return fmt.Sprintf("run %s: %s; continue with: %s", id, reason, strings.Join(next, "; "))
}

// openStore opens the run database: --db, else $ORCH_DB, else the nearest
// .orch/orch.db above the current directory or the cuelist, else a new one
// next to the cuelist (as orch run).
func openStore(cmd *cobra.Command, cuelist string) (*store.DB, string, error) {
	path, _ := cmd.Flags().GetString("db")
	if path == "" {
		path = os.Getenv("ORCH_DB")
	}
	if path == "" {
		path = filepath.Join(filepath.Dir(cuelist), store.DefaultPath())
		for _, start := range []string{".", filepath.Dir(cuelist)} {
			if dir, ok := store.FindProjectDir(start); ok {
				path = filepath.Join(dir, store.DefaultPath())
				break
			}
		}
	}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		return nil, path, fmt.Errorf("opening the run database %s: %w", path, err)
	}
	return db, path, nil
}
