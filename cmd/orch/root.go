package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newRootCmd(f *factory) *cobra.Command {
	io := f.io
	root := &cobra.Command{
		Use:   "orch",
		Short: "Validate, plan and run agents through the cue protocol",
		Long: `orch is a declarative, YAML-driven orchestrator of agents.

Describe agent contracts, cuelists (cues and their dependency graph) and
handoff specs in YAML; orch validates them against JSON Schema and against
each other, compiles them into a DAG and runs the agents through the cue
protocol WARNING -> STANDBY -> GO, recording every run in SQLite.

Exit codes: 0 success, 1 run failed or specs invalid, 2 usage error,
3 paused waiting for a person, 130 interrupted.`,
		Example: `  orch run examples/deploy/cuelist.yaml
  orch status last
  orch validate specs/
  orch validate --output github specs/
  orch plan examples/conflicts/cuelist.yaml
  orch schema cuelist > cuelist.schema.json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(), // orch --version prints what orch version does
	}
	root.SetIn(io.in)
	root.SetOut(io.out)
	root.SetErr(io.err)
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) { setGCPolicy(cmd) }
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&f.db, "db", "", "run database (default $ORCH_DB, else orch.db in the nearest .orch/ directory here or above)")
	pf.StringVar(&f.sync, "sync", "normal", "database durability: normal, or full (fsync every commit: survives power loss)")
	pf.DurationVar(&f.lockTimeout, "lock-timeout", 0, "how long a write waits for another process's lock on the database before orch gives up (default $ORCH_LOCK_TIMEOUT, else 10s)")
	f.flags = pf
	root.AddCommand(
		newValidateCmd(f, nil),
		newPlanCmd(f, nil),
		newRunCmd(f, nil),
		newStatusCmd(f, nil),
		newEventsCmd(f, nil),
		newLogsCmd(f, nil),
		newGoCmd(f, nil),
		newAnswerCmd(f, nil),
		newAckCmd(f, nil),
		newNotifyModeCmd(f, nil),
		newStopCmd(f, nil),
		newResumeCmd(f, nil),
		newRetryCmd(f, nil),
		newLandCmd(f, nil),
		newCleanCmd(f, nil),
		newBBCmd(f),
		newMemoryCmd(f),
		newServeCmd(f, nil),
		newSchemaCmd(f, nil),
		newVersionCmd(io),
		newWorkerCmd(f, nil),
		newMCPCmd(f, nil), newAskCmd(io), newMsgCmd(io), newInboxCmd(io),
	)
	return root
}

// argsBetween accepts between lo and hi positional arguments (hi < 0: no limit).
func argsBetween(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < lo && lo == 1 && hi == 1:
			return flagError{fmt.Errorf("%s needs one argument", cmd.CommandPath())}
		case len(args) < lo:
			return flagError{fmt.Errorf("%s needs at least %d argument(s)", cmd.CommandPath(), lo)}
		case hi >= 0 && len(args) > hi:
			return flagError{fmt.Errorf("%s takes at most %d argument(s), got %d", cmd.CommandPath(), hi, len(args))}
		}
		return nil
	}
}
