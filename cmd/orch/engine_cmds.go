package main

import (
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orch-cli/orch/control"
)

// gitRemoteEnv is how orch hands --git-remote to orch-temporal (its
// default there): a remote's URL may carry a token, which a command line
// would show to every user of the machine (ps).
const gitRemoteEnv = "ORCH_GIT_REMOTE"

// temporalRunOptions are orch run's flags for --engine temporal.
type temporalRunOptions struct {
	engine                    string
	engineSet                 bool
	address, namespace, queue string
	detach, maxParallelSet    bool
	gitRemote                 string
	unhandled                 []string // flags orch-temporal does not take
	connArgs, connEnv         []string // TLS flags and the API key (connectionArgs)
}

// runOnTemporal hands orch run --engine temporal over to orch-temporal run,
// with the database orch run would record in and the Temporal flags
// resolved here; orch run's flags that orch-temporal does not take are
// refused.
func runOnTemporal(opts *runOptions) error {
	const what = "orch run --engine temporal"
	if err := control.RefuseOptions(what, ", or run it with --engine local", opts.temporal.unhandled); err != nil {
		return err
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	dbFile, err := filepath.Abs(ctl.RunPath(opts.path))
	if err != nil {
		return err
	}
	t := opts.temporal
	argv := []string{"run", "--db", dbFile, "--temporal-address", t.address, "--temporal-namespace", t.namespace, "--task-queue", t.queue}
	for _, s := range opts.sets {
		argv = append(argv, "--set", s)
	}
	if t.maxParallelSet {
		argv = append(argv, "--max-parallel", strconv.Itoa(opts.maxParallel))
	}
	if opts.root != "" {
		argv = append(argv, "--root", opts.root)
	}
	if t.detach {
		argv = append(argv, "--detach")
	}
	argv = append(argv, t.connArgs...)
	env := t.connEnv
	if t.gitRemote != "" { // in the environment, not on a command line: it may carry a token
		env = append(env[:len(env):len(env)], gitRemoteEnv+"="+t.gitRemote)
	}
	if t.detach {
		return handOverEnv(opts.io, what, append(argv, "--", opts.path), env)
	}
	// Followed here: the run's plain progress lines, read from the store
	// orch-temporal mirrors the workflow into.
	id := progressRunID()
	before, stop := followStoreProgress(opts.io.out, dbFile, id, defaultTailLines, false)
	io := *opts.io
	io.err = before(io.err)
	err = handOverEnv(&io, what, append(argv, "--run-id", id, "--", opts.path), env)
	stop()
	return err
}

// temporalRunFlags registers orch run's Temporal flags.
func temporalRunFlags(cmd *cobra.Command, t *temporalRunOptions) {
	f := cmd.Flags()
	f.StringVar(&t.engine, "engine", "local", "local, or temporal: run on Temporal through orch-temporal (default $ORCH_ENGINE)")
	f.String("temporal-address", "", "--engine temporal: the Temporal frontend (default $TEMPORAL_ADDRESS, else 127.0.0.1:7233)")
	f.String("temporal-namespace", "", "--engine temporal: the namespace (default $TEMPORAL_NAMESPACE, else default)")
	f.StringVar(&t.queue, "task-queue", "orch", "--engine temporal: the task queue of the workflow and of agents without a placement")
	f.StringVar(&t.gitRemote, "git-remote", "", "--engine temporal, worktree agents: the git remote the workers share their branches through (default $ORCH_GIT_REMOTE)")
	f.BoolVar(&t.detach, "detach", false, "--engine temporal: start the run, print its id and how to follow it, and exit")
	connectionFlags(f, "--engine temporal: ")
}

// parseTemporalRunFlags fills t from the flags cmd was given.
func parseTemporalRunFlags(cmd *cobra.Command, t *temporalRunOptions) {
	t.engineSet = cmd.Flags().Changed("engine")
	t.address = flagOrEnv(cmd, "temporal-address", "TEMPORAL_ADDRESS", "127.0.0.1:7233")
	t.namespace = flagOrEnv(cmd, "temporal-namespace", "TEMPORAL_NAMESPACE", "default")
	t.maxParallelSet = cmd.Flags().Changed("max-parallel")
	t.unhandled = unhandledFlags(cmd.Flags(), append([]string{"engine", "temporal-address", "temporal-namespace", "task-queue", "detach", "set", "max-parallel", "root", "git-remote"}, connectionFlagNames...)...)
	t.connArgs, t.connEnv = connectionArgs(cmd)
}

type workerOptions struct {
	io        *streams
	argv      []string // orch-temporal's: worker and the flags set
	env       []string // orch-temporal's environment: the API key
	unhandled []string
}

func newWorkerCmd(f *factory, runF func(*workerOptions) error) *cobra.Command {
	opts := &workerOptions{io: f.io}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the agents of Temporal runs (orch run --engine temporal) from a task queue",
		Long: `Poll a Temporal task queue and run what it holds: the orch.run workflows
and the agents' WARNING, STANDBY and GO as activities. Start one on each
machine that runs agents; several may poll one queue. --max-concurrent bounds
the phases it runs at once; an agent waiting for a child it handed off to
(or spawned, until the child is announced to it) lends its slot to the
child meanwhile, so a tree of handoffs deeper than the bound still makes
progress. --root is that
machine's checkout of the project: cuelists are found at the path below it
that orch run --engine temporal recorded. This runs orch-temporal worker.

SIGTERM or Ctrl-C drains it: it takes no new work, lets what it runs finish
for up to --drain-grace, then stops those agents and hands their phases back
to the queue (a GO of a cue that is not idempotent is interrupted instead),
and exits 0. Its orch-temporal never outlives it, even after kill -9.

Agents with workspace: worktree work in worktrees of --root, which must be a
clone of the git remote the run's branches go through (--git-remote, else
the one orch run --engine temporal --git-remote named): each GO's branch
is pushed when it ends and fetched by the worker of the next; a worker
merges the branches at fan-in and pushes the merge. A merge whose conflict
goes to a resolver agent or to the person keeps its worktree on the worker
that made it: the worker also polls a task queue of its own,
QUEUE/orch-worker@HOST:PID, where the resolver runs and the merge goes on.`,
		Example: `  orch worker
  orch worker --queue gpu --max-concurrent 2 --root /srv/project
  orch worker --drain-grace 5m     # let long agents finish on kill PID
  orch worker --root /srv/clone --git-remote git@example.com:team/project.git`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.unhandled = unhandledFlags(cmd.Flags(), append([]string{"queue", "root", "max-concurrent", "drain-grace", "temporal-address", "temporal-namespace", "task-queue", "git-remote"}, connectionFlagNames...)...)
			opts.argv = []string{"worker"}
			_, opts.env = connectionArgs(cmd)
			cmd.Flags().Visit(func(f *pflag.Flag) {
				switch f.Name { // in the environment, not on the command line: they may carry a secret
				case "api-key":
				case "git-remote":
					opts.env = append(opts.env, gitRemoteEnv+"="+f.Value.String())
				default:
					opts.argv = append(opts.argv, "--"+f.Name, f.Value.String())
				}
			})
			if runF != nil {
				return runF(opts)
			}
			return runWorker(opts)
		},
	}
	fs := cmd.Flags()
	fs.String("queue", "", "the task queue to poll (default --task-queue)")
	fs.String("root", ".", "the project checkout the cuelists' paths are relative to")
	fs.Int("max-concurrent", 4, "the most phases (agent processes) at work at once; an agent waiting for a child it handed off to or spawned does not count")
	fs.String("git-remote", "", "worktree agents: the git remote their branches are pushed to and fetched from; --root is a clone of it (default $ORCH_GIT_REMOTE, else the run's)")
	fs.Duration("drain-grace", 30*time.Second, "on SIGTERM or Ctrl-C, how long running phases may go on before they are stopped and handed back")
	fs.String("temporal-address", "", "the Temporal frontend (default $TEMPORAL_ADDRESS, else 127.0.0.1:7233)")
	fs.String("temporal-namespace", "", "the namespace (default $TEMPORAL_NAMESPACE, else default)")
	fs.String("task-queue", "orch", "the task queue of the workflows, and of agents without a placement")
	connectionFlags(fs, "")
	return cmd
}

func runWorker(opts *workerOptions) error {
	if err := control.RefuseOptions("orch worker", "", opts.unhandled); err != nil {
		return err
	}
	return handOverEnv(opts.io, "orch worker", opts.argv, opts.env)
}
