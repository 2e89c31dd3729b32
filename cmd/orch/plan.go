package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/planner/planfmt"
	"github.com/orch-cli/orch/spec"
	"github.com/orch-cli/orch/spec/diagfmt"
)

type planOptions struct {
	io          *streams
	path        string
	cuelist     string
	format      string
	maxFileSize string
}

func newPlanCmd(f *factory, runF func(*planOptions) error) *cobra.Command {
	opts := &planOptions{io: f.io}
	cmd := &cobra.Command{
		Use:   "plan CUELIST|DIR",
		Short: "Show the compiled DAG: waves, critical path, conflicts, tools",
		Long: `Compile a cuelist (and the agent files it includes) into the plan that
orch run executes: the stable order and waves of the dependency graph, the
critical path by estimate (default 1m per cue), the conflicts between cues
that may run at the same time (a resource beyond its capacity, an agent
beyond its concurrency, an output written twice) with the arbitration
decided for each, and every agent's effective tools by handoff depth.
A directory holding one cuelist may be given instead of its file.

The specs are validated first; with errors, they are printed and nothing
is planned (exit 1).`,
		Example: `  orch plan examples/conflicts/cuelist.yaml
  orch plan --output json examples/deploy/cuelist.yaml | jq '.critical_path'
  orch plan --output mermaid examples/deploy/cuelist.yaml
  orch plan --output dot specs/release.yaml | dot -Tsvg > plan.svg`,
		Args: argsBetween(1, 1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.path = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runPlan(opts)
		},
	}
	fs := cmd.Flags()
	outputFlag(cmd, &opts.format, "text", "output format: "+strings.Join(planfmt.Formats, ", "), planfmt.Formats)
	fs.StringVar(&opts.cuelist, "cuelist", "", "the cuelist to plan when the file holds several")
	fs.StringVar(&opts.maxFileSize, "max-file-size", "8MiB", "largest spec file read")
	return cmd
}

func runPlan(opts *planOptions) error {
	io := opts.io
	if !oneOf(opts.format, planfmt.Formats) {
		return usageError(fmt.Errorf("unknown format %q (want %s)", opts.format, strings.Join(planfmt.Formats, ", ")))
	}
	c, err := compile(io, opts.path, opts.cuelist, opts.maxFileSize, "")
	if err != nil {
		return err
	}
	p := c.Plan
	switch opts.format {
	case "json":
		return planfmt.JSON(io.out, p)
	case "mermaid":
		return planfmt.Mermaid(io.out, p)
	case "dot":
		return planfmt.DOT(io.out, p)
	}
	return planfmt.Text(io.out, p)
}

// compile loads and checks a cuelist and builds its plan; every file it
// reads must be inside root ("" = the cuelist's directory). Problems in the
// specs are printed to stderr as validate prints them (warnings too) and end
// the command with exit 1.
func compile(io *streams, path, id, maxFileSize, root string) (*control.Compiled, error) {
	maxSize, err := parseSize(maxFileSize)
	if err != nil {
		return nil, usageError(fmt.Errorf("--max-file-size: %w", err))
	}
	c, err := control.Compile(path, id, spec.LoadOptions{MaxFileSize: maxSize, Root: root})
	if err != nil {
		return nil, err
	}
	set, diags := c.Set, c.Diags
	if len(diags) > 0 {
		color := isTerminalWriter(io.err) && os.Getenv("NO_COLOR") == ""
		shown := diags
		if !diags.HasErrors() {
			shown = nil // warnings alone: a summary line, the plan follows
			errs, warns := diags.Count()
			fmt.Fprintf(io.err, "orch: %d error(s), %d warning(s) in the specs (orch validate %s shows them)\n", errs, warns, path)
		}
		if shown != nil {
			_ = diagfmt.Text(io.err, shown, set, diagfmt.TextOptions{Color: color, Files: len(set.Files)})
		}
	}
	if c.Plan == nil {
		return nil, silent(exitFailed)
	}
	return c, nil
}

func isTerminalWriter(w any) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}
