package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/spec"
	"github.com/orch-cli/orch/spec/diagfmt"
)

type validateOptions struct {
	io             *streams
	paths          []string
	format         string
	strict         bool
	checkArtifacts bool
	root           string
	maxFileSize    string
}

func newValidateCmd(f *factory, runF func(*validateOptions) error) *cobra.Command {
	opts := &validateOptions{io: f.io}
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check specs against the schemas and against each other",
		Long: `Check agent contracts, cuelists and handoff specs: YAML syntax, the JSON
Schemas, and the rules across documents (unique ids, references that
resolve, no dependency cycles, every required key supplied, handoffs
allowed). Every problem in every file is reported in one pass, each at its
file:line:col, sorted, identical from run to run.

PATH is a file, a directory (every *.yaml and *.yml below it) or a glob.
A cuelist's include globs are loaded too, from inside the project root:
--root, else the directory of each PATH (a file's directory, a directory
itself, a glob's fixed part). Nothing is executed or fetched: an agent's
program that is not found (in PATH, or in its workdir for a relative
path) is a warning, as PATH may differ where the specs run.

Exit status: 0 valid (warnings allowed unless --strict), 1 invalid,
2 usage error (bad flag, unreadable path).`,
		Example: `  orch validate specs/
  orch validate examples/deploy/cuelist.yaml
  orch validate --output github specs/       # annotations in GitHub Actions
  orch validate --output sarif specs/ > orch.sarif
  orch validate --strict --check-artifacts specs/`,
		Args: argsBetween(1, -1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.paths = args
			if runF != nil {
				return runF(opts)
			}
			return runValidate(opts)
		},
	}
	fs := cmd.Flags()
	outputFlag(cmd, &opts.format, "text", "output format: "+strings.Join(diagfmt.Formats, ", "), diagfmt.Formats)
	fs.BoolVar(&opts.strict, "strict", false, "treat warnings as errors")
	fs.BoolVar(&opts.checkArtifacts, "check-artifacts", false, "check that handoff artifacts exist and match their sha256")
	fs.StringVar(&opts.root, "root", "", "project root: includes stay inside it (default: each PATH's directory), artifact paths are relative to it (default: .)")
	fs.StringVar(&opts.maxFileSize, "max-file-size", "8MiB", "largest spec file read (e.g. 512KiB, 32MiB)")
	return cmd
}

func runValidate(opts *validateOptions) error {
	io := opts.io
	if !oneOf(opts.format, diagfmt.Formats) {
		return usageError(fmt.Errorf("unknown format %q (want %s)", opts.format, strings.Join(diagfmt.Formats, ", ")))
	}
	maxSize, err := parseSize(opts.maxFileSize)
	if err != nil {
		return usageError(fmt.Errorf("--max-file-size: %w", err))
	}
	set, diags, err := control.Validate(opts.paths, spec.LoadOptions{MaxFileSize: maxSize, Root: opts.root},
		spec.CheckOptions{CheckArtifacts: opts.checkArtifacts, Root: opts.root})
	if err != nil {
		return err
	}
	if opts.strict {
		diags = diags.Strict()
	}
	switch opts.format {
	case "json":
		err = diagfmt.JSON(io.out, diags)
	case "github":
		err = diagfmt.GitHub(io.out, diags, len(set.Files))
	case "sarif":
		err = diagfmt.SARIF(io.out, diags, versionString())
	default:
		color := io.outTTY && os.Getenv("NO_COLOR") == ""
		err = diagfmt.Text(io.out, diags, set, diagfmt.TextOptions{Color: color, Files: len(set.Files)})
	}
	if err != nil {
		return err
	}
	if diags.HasErrors() {
		return silent(exitFailed)
	}
	return nil
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// parseSize reads a byte size such as 1048576, 512KiB, 8MiB, 8MB or 1G.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1000}, {"MB", 1000_000}, {"GB", 1000_000_000}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid size %q (use e.g. 512KiB or 32MiB)", s)
	}
	return n * mult, nil
}
