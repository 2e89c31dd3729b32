package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/worker"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/store"
)

func workerCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "worker", Short: "Poll a task queue and run the workflow and the agents' activities", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			queue, _ := cmd.Flags().GetString("queue")
			if queue == "" {
				queue, _ = cmd.Flags().GetString("task-queue")
			}
			root, _ := cmd.Flags().GetString("root")
			root, err := filepath.Abs(root)
			if err != nil {
				return err
			}
			sweepEarlierWorkers(root)
			n, _ := cmd.Flags().GetInt("max-concurrent")
			c, err := dialAs(cmd, workerIdentity())
			if err != nil {
				return err
			}
			defer c.Close()
			// The client holds the API key now: the agents this worker
			// starts (they inherit its environment) never see it.
			_ = os.Unsetenv(APIKeyEnv)
			grace, _ := cmd.Flags().GetDuration("drain-grace")
			w := worker.New(c, queue, worker.Options{MaxConcurrentActivityExecutionSize: n, WorkerStopTimeout: grace})
			temporal.RegisterWorkflow(w)
			// A queue of this worker's own: what only it can do (a merge's
			// next round, in the worktree it kept for the person) goes there.
			own := queue + "/" + workerIdentity()
			acts := &temporal.Activities{Root: root, GitRemote: gitRemoteFlag(cmd), Queue: own, SearchMemory: store.SearchItems}
			defer acts.Close() // the runs' agent processes and orch's MCP server for them
			temporal.RegisterActivities(w, acts)
			mine := worker.New(c, own, worker.Options{MaxConcurrentActivityExecutionSize: n, WorkerStopTimeout: grace, DisableWorkflowWorker: true})
			temporal.RegisterActivities(mine, acts)
			if err := mine.Start(); err != nil {
				return err
			}
			defer mine.Stop()
			fmt.Fprintf(os.Stderr, "orch worker: polling task queue %s, cuelists below %s\n", queue, root)
			stop := make(chan interface{})
			go func() {
				why := stopReason()
				fmt.Fprintf(os.Stderr, "orch worker: %s: draining (no new work; running phases have %s to finish, then go back to the queue)\n", why, grace)
				close(stop)
			}()
			return w.Run(stop)
		}}
	cmd.Flags().String("queue", "", "the task queue to poll (default --task-queue: orch)")
	cmd.Flags().String("root", ".", "the project checkout the cuelists' paths are relative to")
	cmd.Flags().Int("max-concurrent", 4, "the most activities (agent processes) run at once")
	cmd.Flags().String("git-remote", "", "worktree agents: the git remote their branches are pushed to and fetched from; --root is a clone of it (default $ORCH_GIT_REMOTE, else the run's)")
	cmd.Flags().Duration("drain-grace", 30*time.Second, "on SIGTERM or Ctrl-C, how long running phases may go on before they are stopped and handed back")
	return cmd
}

// ParentEnv names the process that started this one (orch worker): when it
// dies (even kill -9) this worker drains and ends, rather than run agents
// with nobody to stop it. On Linux the parent also asks the kernel for a
// SIGTERM at its death (PR_SET_PDEATHSIG); the watch covers the others.
const ParentEnv = "ORCH_PARENT_PID"

// stopReason waits for what ends the worker: SIGTERM, SIGINT, or the death
// of the parent ParentEnv names.
func stopReason() string {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	parent, _ := strconv.Atoi(os.Getenv(ParentEnv))
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case s := <-sig:
			return s.String()
		case <-tick.C:
			if parent > 0 && os.Getppid() != parent {
				return fmt.Sprintf("its parent (pid %d) is gone", parent)
			}
		}
	}
}

// sweepEarlierWorkers marks what this worker starts as its own (agents,
// merge verify commands) and kills what a worker of the same --root that is
// gone (kill -9: it could stop nothing) left running.
func sweepEarlierWorkers(root string) {
	key := "orch-worker:" + root
	proc.SetOwner(key)
	if killed := proc.KillOrphanedOwned(key); len(killed) > 0 {
		fmt.Fprintf(os.Stderr, "orch worker: stopped %d process(es) left running by an earlier worker of %s that is gone: pids %v\n", len(killed), root, killed)
	}
}
