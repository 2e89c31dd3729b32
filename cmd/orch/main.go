// Command orch is a declarative, YAML-driven orchestrator of agents: it
// validates agent contracts, cuelists and handoff specs, plans them as a DAG and
// runs them through the cue protocol WARNING -> STANDBY -> GO.
//
// This package is the command line: each command parses its arguments into
// an options struct and calls one run function, which asks package control
// (or spec, planner) for the work and renders the result as text or JSON.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

func main() {
	stopProfile := profile(os.Stderr)
	code := run(os.Args[1:], stdio())
	stopProfile()
	os.Exit(code)
}

// streams are the command's input and outputs, injected so tests can capture them.
type streams struct {
	in  io.Reader
	out io.Writer
	err io.Writer
	// outTTY and inTTY say whether stdout / stdin are terminals (live progress,
	// colour, prompts); tests and pipes get plain output.
	outTTY bool
	inTTY  bool
}

func stdio() *streams {
	out, errOut := survivePipes(os.Stdout, os.Stderr)
	return &streams{in: os.Stdin, out: out, err: errOut, outTTY: isTerminal(os.Stdout), inTTY: isTerminal(os.Stdin)}
}

// isTerminal asks the terminal driver, not the file mode: /dev/null is a
// character device too, and output sent there is not watched by anyone.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// run executes one orch command line and returns its exit code. Errors are
// printed here, once, as "orch: ...".
func run(args []string, io *streams) int {
	f := newFactory(io)
	defer f.close()
	root := newRootCmd(f)
	root.SetArgs(args)
	// Ctrl-C and SIGTERM cancel the command's context: orch run stops its
	// agents (exit 130), the --watch and --follow loops end (exit 0).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	code := exitCode(err)
	if err != nil && !isSilent(err) {
		fmt.Fprintf(io.err, "orch: %v\n", err)
		if code == exitUsage && isFlagError(err) {
			fmt.Fprintf(io.err, "Run '%s --help' for usage.\n", commandPath(root, args))
		}
	}
	return code
}
