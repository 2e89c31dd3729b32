package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// The temporal engine lives in a second binary, orch-temporal, which holds
// the Temporal client (gRPC, protobuf): linked into orch, they would make
// every command bigger and slower to start. orch run --engine temporal
// (or ORCH_ENGINE=temporal) and orch worker hand over to it.

const temporalBinary = "orch-temporal"

// handsOver reports whether args are a command the temporal engine runs.
func handsOver(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "worker":
		return true
	case "run":
		return engineOf(args[1:]) == "temporal"
	}
	return false
}

// engineOf is the engine orch run's arguments ask for: --engine, else
// $ORCH_ENGINE, else local.
func engineOf(args []string) string {
	engine := os.Getenv("ORCH_ENGINE")
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--engine="); ok {
			engine = v
		} else if a == "--engine" && i+1 < len(args) {
			engine = args[i+1]
		}
	}
	if engine == "" {
		return "local"
	}
	return engine
}

// handOver runs orch-temporal with the same arguments and returns its exit
// code; missing, it says how to install it (exit 2).
func handOver(args []string, io *streams) int {
	bin := temporalPath()
	if bin == "" {
		fmt.Fprintf(io.err, "orch: orch %s --engine temporal needs %s: go install github.com/orch-cli/orch/cmd/orch-temporal@%s (it holds the Temporal client; orch stays small)\n",
			args[0], temporalBinary, versionString())
		return exitUsage
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = io.in, io.out, io.err
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	fmt.Fprintf(io.err, "orch: running %s: %v\n", bin, err)
	return 1
}

// temporalPath finds orch-temporal next to this orch, else on PATH.
func temporalPath() string {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), temporalBinary+exeSuffix())
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	p, err := exec.LookPath(temporalBinary)
	if err != nil {
		return ""
	}
	return p
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}
