package main

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runOnTemporal hands orch run --engine temporal over to orch-temporal run,
// with the database orch run would record in and the Temporal flags
// resolved here; orch run's flags that orch-temporal does not take are
// refused.
func runOnTemporal(cmd *cobra.Command, io *streams, opts *runOptions) error {
	if err := refuseFlags(cmd, "orch run --engine temporal", ", or run it with --engine local",
		"engine", "temporal-address", "temporal-namespace", "task-queue", "detach", "set", "max-parallel", "root"); err != nil {
		return err
	}
	dbFile, err := filepath.Abs(runDBPath(cmd, opts.path))
	if err != nil {
		return err
	}
	queue, _ := cmd.Flags().GetString("task-queue")
	argv := []string{"run", "--db", dbFile,
		"--temporal-address", flagOrEnv(cmd, "temporal-address", "TEMPORAL_ADDRESS", "127.0.0.1:7233"),
		"--temporal-namespace", flagOrEnv(cmd, "temporal-namespace", "TEMPORAL_NAMESPACE", "default"),
		"--task-queue", queue}
	for _, s := range opts.sets {
		argv = append(argv, "--set", s)
	}
	if cmd.Flags().Changed("max-parallel") {
		argv = append(argv, "--max-parallel", strconv.Itoa(opts.maxParallel))
	}
	if opts.root != "" {
		argv = append(argv, "--root", opts.root)
	}
	if detach, _ := cmd.Flags().GetBool("detach"); detach {
		argv = append(argv, "--detach")
	}
	return handOver(io, "orch run --engine temporal", append(argv, "--", opts.path))
}

// flagOrEnv is a flag's value when set, else the environment variable's,
// else def.
func flagOrEnv(cmd *cobra.Command, flag, env, def string) string {
	if f := cmd.Flag(flag); f != nil && f.Changed {
		return f.Value.String()
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

func newWorkerCmd(io *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the agents of Temporal runs (orch run --engine temporal) from a task queue",
		Long: `Poll a Temporal task queue and run what it holds: the orch.run workflows
and the agents' WARNING, STANDBY and GO as activities. Start one on each
machine that runs agents; several may poll one queue. --root is that
machine's checkout of the project: cuelists are found at the path below it
that orch run --engine temporal recorded. This runs orch-temporal worker.`,
		Example: `  orch worker
  orch worker --queue gpu --max-concurrent 2 --root /srv/project`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseFlags(cmd, "orch worker", "", "queue", "root", "max-concurrent", "temporal-address", "temporal-namespace", "task-queue"); err != nil {
				return err
			}
			argv := []string{"worker"}
			cmd.Flags().Visit(func(f *pflag.Flag) { argv = append(argv, "--"+f.Name, f.Value.String()) })
			return handOver(io, "orch worker", argv)
		},
	}
	f := cmd.Flags()
	f.String("queue", "", "the task queue to poll (default --task-queue)")
	f.String("root", ".", "the project checkout the cuelists' paths are relative to")
	f.Int("max-concurrent", 4, "the most activities (agent processes) run at once")
	f.String("temporal-address", "", "the Temporal frontend (default $TEMPORAL_ADDRESS, else 127.0.0.1:7233)")
	f.String("temporal-namespace", "", "the namespace (default $TEMPORAL_NAMESPACE, else default)")
	f.String("task-queue", "orch", "the task queue of the workflows, and of agents without a placement")
	return cmd
}
