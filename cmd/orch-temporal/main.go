// Command orch-temporal runs orch cuelists on Temporal: orch run --engine
// temporal and orch worker hand over to it (it holds the Temporal client, so
// that orch stays small). Subcommands: run, worker, go, stop, bb set,
// answer, resume, sync.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/engine/temporal"
)

// exitError carries an exit code: 1 failed, 2 usage, 3 waiting for a person, 130 interrupted.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() {
	os.Exit(execute(os.Args[1:], os.Stderr))
}

// execute runs one orch-temporal command line and returns its exit code,
// printing an error once, as "orch: ...", to stderr.
func execute(args []string, stderr io.Writer) int {
	root := &cobra.Command{Use: "orch-temporal", SilenceUsage: true, SilenceErrors: true,
		Short: "Run orch cuelists on Temporal (orch run --engine temporal, orch worker)"}
	pf := root.PersistentFlags()
	pf.String("temporal-address", envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "the Temporal frontend (host:port; default $TEMPORAL_ADDRESS)")
	pf.String("temporal-namespace", envOr("TEMPORAL_NAMESPACE", "default"), "the Temporal namespace (default $TEMPORAL_NAMESPACE)")
	pf.String("task-queue", temporal.DefaultTaskQueue, "the task queue of the workflow and of agents without a placement")
	pf.String("db", "", "the run database (default: the nearest .orch/orch.db)")
	pf.String("engine", "temporal", "accepted for orch's arguments; always temporal here")
	connectionFlags(pf)
	root.AddCommand(runCmd(), workerCmd(), goCmd(), stopCmd(), bbCmd(), answerCmd(), notifyModeCmd(), resumeCmd(), syncCmd())
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "orch:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// quietLogger keeps the SDK's chatter off a person's terminal.
type quietLogger struct{}

func (quietLogger) Debug(string, ...interface{}) {}
func (quietLogger) Info(string, ...interface{})  {}
func (quietLogger) Warn(string, ...interface{})  {}
func (quietLogger) Error(msg string, kv ...interface{}) {
	fmt.Fprintln(os.Stderr, append([]interface{}{"orch-temporal:", msg}, kv...)...)
}
