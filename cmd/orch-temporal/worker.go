package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/worker"

	"github.com/orch-cli/orch/engine/temporal"
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
			n, _ := cmd.Flags().GetInt("max-concurrent")
			c, err := dial(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			w := worker.New(c, queue, worker.Options{MaxConcurrentActivityExecutionSize: n, WorkerStopTimeout: 0})
			temporal.RegisterWorkflow(w)
			temporal.RegisterActivities(w, &temporal.Activities{Root: root})
			fmt.Fprintf(os.Stderr, "orch worker: polling task queue %s, cuelists below %s\n", queue, root)
			stop := make(chan interface{})
			go func() {
				sig := make(chan os.Signal, 1)
				signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
				<-sig
				close(stop)
			}()
			return w.Run(stop)
		}}
	cmd.Flags().String("queue", "", "the task queue to poll (default --task-queue: orch)")
	cmd.Flags().String("root", ".", "the project checkout the cuelists' paths are relative to")
	cmd.Flags().Int("max-concurrent", 4, "the most activities (agent processes) run at once")
	return cmd
}
