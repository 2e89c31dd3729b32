package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/internal/toolschema"
	"github.com/orch-cli/orch/planner/planfmt"
	"github.com/orch-cli/orch/schemas"
	"github.com/orch-cli/orch/spec"
	"github.com/orch-cli/orch/spec/diagfmt"
)

type validateArgs struct {
	Paths []string `json:"paths" jsonschema:"spec files, directories (every *.yaml and *.yml below) or globs, relative to the project root"`
}

type planArgs struct {
	Cuelist string         `json:"cuelist" jsonschema:"the cuelist file (or a directory holding one), relative to the project root"`
	Inputs  map[string]any `json:"inputs,omitempty" jsonschema:"run inputs the cuelist declares, checked as a run would check them"`
}

type schemaArgs struct {
	Kind string `json:"kind" jsonschema:"the kind of document"`
}

type runArgs struct {
	Cuelist string         `json:"cuelist" jsonschema:"the cuelist file (or a directory holding one), relative to the project root"`
	Inputs  map[string]any `json:"inputs,omitempty" jsonschema:"run inputs the cuelist declares (strings, numbers, booleans)"`
	Engine  string         `json:"engine,omitempty" jsonschema:"local (the default)"`
}

func specTools() []tool {
	return []tool{
		define("validate", "Validate specs",
			"Check agent contracts, cuelists and handoff specs (YAML, the JSON Schemas, the rules across documents). "+
				"Returns {valid, diagnostics: [{file, line, column, severity, code, path, message}]}, as orch validate --output json; fix the specs at those places and validate again.",
			reads, nil, validateTool),
		define("plan", "Plan a cuelist",
			"Compile a cuelist into its DAG: cues, edges, waves, the critical path, conflicts and their arbitration, each agent's tools "+
				"(orch plan --output json), and mermaid: the DAG as a Mermaid flowchart. Specs with errors are a tool error listing them.",
			reads, nil, planTool),
		define("schema", "JSON Schema of a spec kind",
			"The JSON Schema (draft 2020-12) of one kind of orch document: agent, cuelist or message.",
			reads, toolschema.Enum("kind", schemas.Kinds...), schemaTool),
		define("run", "Start a run",
			"Start a run of a cuelist in the background and return its id at once ({run, pid, log, message}). "+
				"Follow it with wait, status, events and logs.",
			starts, toolschema.Enum("engine", "local", "temporal"), runTool),
	}
}

func validateTool(_ context.Context, s *Server, _ *mcp.CallToolRequest, in validateArgs) (any, error) {
	if len(in.Paths) == 0 {
		return nil, errors.New("paths: give at least one spec file, directory or glob")
	}
	paths := make([]string, len(in.Paths))
	for i, p := range in.Paths {
		abs, err := s.inside(fmt.Sprintf("paths[%d]", i), p)
		if err != nil {
			return nil, err
		}
		paths[i] = abs
	}
	_, diags, err := control.Validate(paths, spec.LoadOptions{Root: s.root}, spec.CheckOptions{Root: s.root})
	if err != nil {
		return nil, err
	}
	return rendered(func(b *bytes.Buffer) error { return diagfmt.JSON(b, diags) })
}

// planJSON is orch plan --output json with the plan's Mermaid flowchart.
type planJSON struct {
	planfmt.JSONPlan
	Mermaid string `json:"mermaid"`
}

func planTool(_ context.Context, s *Server, _ *mcp.CallToolRequest, in planArgs) (any, error) {
	c, _, err := s.compile(in.Cuelist, in.Inputs)
	if err != nil {
		return nil, err
	}
	var m strings.Builder
	if err := planfmt.Mermaid(&m, c.Plan); err != nil {
		return nil, err
	}
	return planJSON{JSONPlan: planfmt.ToJSON(c.Plan), Mermaid: m.String()}, nil
}

func schemaTool(_ context.Context, _ *Server, _ *mcp.CallToolRequest, in schemaArgs) (any, error) {
	b, err := schemas.Bundle(in.Kind)
	if err != nil {
		return nil, fmt.Errorf("kind: %w", err)
	}
	return json.RawMessage(b), nil
}

func runTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in runArgs) (any, error) {
	if in.Engine == "temporal" {
		// orch run --engine temporal hands the run to orch-temporal, which
		// names the run itself: its id cannot be returned before it starts.
		return nil, errors.New("engine: temporal runs are not started from orch mcp in this version; start one with orch run --engine temporal, then follow it here")
	}
	c, sets, err := s.compile(in.Cuelist, in.Inputs)
	if err != nil {
		return nil, err
	}
	started, err := s.ctl.StartDetached(ctx, control.StartRequest{Compiled: c, Root: s.root, Sets: sets}, control.Detach{Log: "mcp"})
	if err != nil {
		return nil, err
	}
	return started, s.recorded(ctx, started)
}

// recorded waits (up to startWait) until the detached orch has recorded
// the run, so that every tool called next finds it; one that does not
// start is an error saying what it printed.
func (s *Server) recorded(ctx context.Context, started *control.Started) error {
	deadline := time.Now().Add(startWait)
	for {
		if _, err := s.ctl.Resolve(ctx, started.Run); err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			out, _ := os.ReadFile(started.Log)
			return fmt.Errorf("run %s was not recorded within %s of its start (pid %d); its output (%s):\n%s",
				started.Run, startWait, started.PID, started.Log, strings.TrimSpace(string(out)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startWait is how long the run tool waits for a run it started to be
// recorded.
const startWait = 15 * time.Second

// compile loads, checks and plans the cuelist at path (inside the
// project), and checks inputs against it; specs with errors are an error
// listing them as orch plan prints them.
func (s *Server) compile(path string, inputs map[string]any) (*control.Compiled, []string, error) {
	abs, err := s.inside("cuelist", path)
	if err != nil {
		return nil, nil, err
	}
	sets, err := inputSets(inputs)
	if err != nil {
		return nil, nil, err
	}
	c, err := control.Compile(abs, "", spec.LoadOptions{Root: s.root})
	if err != nil {
		return nil, nil, err
	}
	if c.Plan == nil {
		var b bytes.Buffer
		_ = diagfmt.Text(&b, c.Diags, c.Set, diagfmt.TextOptions{Files: len(c.Set.Files)})
		return nil, nil, fmt.Errorf("the specs have errors (validate lists them):\n%s", strings.TrimSpace(b.String()))
	}
	if err := control.CheckInputs(c.Plan.Cuelist, sets); err != nil {
		return nil, nil, fmt.Errorf("inputs: %w", err)
	}
	return c, sets, nil
}

// inputSets turns a tool's inputs into key=value sets, as --set gives them.
func inputSets(inputs map[string]any) ([]string, error) {
	keys := make([]string, 0, len(inputs))
	for k := range inputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sets := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := inputs[k].(type) {
		case string:
			v = x
		case float64:
			v = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			v = strconv.FormatBool(x)
		default:
			return nil, fmt.Errorf("inputs.%s: want a string, a number or a boolean", k)
		}
		sets = append(sets, k+"="+v)
	}
	return sets, nil
}

// inside is path (relative to the project root, or absolute) made
// absolute, if it is inside the project root; field names the argument.
func (s *Server) inside(field, path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", fmt.Errorf("%s: give a path", field)
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(s.root, abs)
	}
	abs = filepath.Clean(abs)
	rel, err := filepath.Rel(s.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: %q is outside the project root %s", field, path, s.root)
	}
	return abs, nil
}

func absClean(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.Clean(abs), nil
}

// rendered is what write writes, as a tool's structured output.
func rendered(write func(*bytes.Buffer) error) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}
