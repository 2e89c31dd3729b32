package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
)

// The temporal engine lives in a second binary, orch-temporal, which holds
// the Temporal client (its SDK and API): linked into orch, they would make
// every command bigger and slower to start. orch run --engine temporal (or
// ORCH_ENGINE=temporal) and orch worker hand over to it here, after cobra
// parsed the command line (so global flags may come first); orch go,
// answer, stop, bb set and resume on a run recorded with a temporal block
// are handed over by package control, with the Temporal address, namespace
// and task queue the run started with.

// engineOf is the engine orch run's flags ask for: --engine, else
// $ORCH_ENGINE, else local.
func engineOf(engine string, set bool) (string, error) {
	if !set {
		engine = os.Getenv("ORCH_ENGINE")
	}
	switch engine {
	case "", "local":
		return "local", nil
	case "temporal":
		return "temporal", nil
	}
	return "", usageError(fmt.Errorf("unknown engine %q (want local or temporal)", engine))
}

// handOver runs orch-temporal with args on the command's streams: its
// output and exit status are the command's.
func handOver(io *streams, what string, args []string) error {
	return handOverEnv(io, what, args, nil)
}

// handOverEnv is handOver with env added to orch-temporal's environment.
func handOverEnv(io *streams, what string, args, env []string) error {
	_, err := control.HandOver{What: what, Args: args, Env: env}.Run(&control.IO{In: io.in, Out: io.out, Err: io.err}, versionString())
	return err
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
