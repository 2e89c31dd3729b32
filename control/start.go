package control

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

// Validate loads the specs at paths and runs every check, returning the
// problems sorted. Nothing is executed or fetched.
func Validate(paths []string, lo spec.LoadOptions, co spec.CheckOptions) (*spec.Set, spec.Diagnostics, error) {
	set, diags, err := spec.Load(paths, lo)
	if err != nil {
		return nil, nil, err
	}
	diags = append(diags, spec.Check(set, co)...)
	diags = append(diags, planner.Check(set)...)
	diags = append(diags, spec.CommandWarnings(set.Agents)...)
	return set, diags.Sorted(), nil
}

// Compiled is a cuelist loaded, checked and planned. Diags are the
// problems found in its specs, warnings included; with an error among
// them there is no Plan.
type Compiled struct {
	Path  string // the cuelist file, or the directory holding it, as given
	Set   *spec.Set
	Plan  *planner.Plan
	Diags spec.Diagnostics
}

// Compile loads and checks the cuelist at path (id: the one to take when
// the file holds several) and builds its plan; every file it reads must be
// inside lo.Root ("": the cuelist's directory). A spec that cannot be
// loaded at all is an error; problems in the specs are in Diags.
func Compile(path, id string, lo spec.LoadOptions) (*Compiled, error) {
	set, p, diags, err := planner.Compile(path, id, lo)
	if err != nil && (set == nil || !diags.HasErrors()) {
		if set == nil {
			return nil, err
		}
		return nil, &Error{Kind: Invalid, Err: err}
	}
	// A spec that does not load (NUL bytes, too deep, too big...) holds no
	// cuelist: its diagnostics say why, not "no cuelist".
	return &Compiled{Path: path, Set: set, Plan: p, Diags: diags}, nil
}

// StartRequest starts a new run of a compiled cuelist.
type StartRequest struct {
	Compiled    *Compiled
	Root        string   // the project root, as given ("": the directory given, else the cuelist's)
	Sets        []string // key=value: run inputs declared by the cuelist
	MaxParallel int      // cues in GO at once (0: the cuelist's max_parallel)
	// RunID is the new run's id ("": a new one): 12 hex digits, of no run
	// in the database. StartDetached names the run it starts this way.
	RunID string
}

// Start prepares a new run to execute here: it refuses agents whose
// programs cannot be started from here, applies the inputs, and opens (or
// creates) the database the run records in (RunPath).
func (c *Controller) Start(ctx context.Context, req StartRequest) (*Execution, error) {
	set, p := req.Compiled.Set, req.Compiled.Plan
	if err := checkCommands(p); err != nil {
		return nil, err
	}
	inputs, err := runInputs(p.Cuelist, req.Sets)
	if err != nil {
		return nil, &Error{Kind: Invalid, Err: err}
	}
	db, dbFile, err := c.open(c.RunPath(req.Compiled.Path))
	if err != nil {
		return nil, err
	}
	if err := newRunID(ctx, db, req.RunID); err != nil {
		db.Close()
		return nil, err
	}
	specPath, root := runPaths(req.Compiled.Path, req.Root, p)
	hash := set.Hash()
	specs := cueSpecsEvent("", cueSpecHashes(p)) // in the run's first commit
	p = lighten(set, p)
	return &Execution{DB: db, Options: runner.Options{Plan: p, Recorder: db, RunID: req.RunID, Inputs: inputs, SpecPath: specPath, SpecHash: hash,
		DBPath: dbFile, MaxParallel: req.MaxParallel, ProjectRoot: root, StartedWith: []record.Event{specs}}}, nil
}

var runIDPattern = regexp.MustCompile(`^[0-9a-f]{12}$`)

// newRunID refuses an id given for a new run that is not one orch makes,
// or that a run in db already has ("" is fine: the runner makes one).
func newRunID(ctx context.Context, db *store.DB, id string) error {
	if id == "" {
		return nil
	}
	if !runIDPattern.MatchString(id) {
		return invalidf("run id %q: want 12 hex digits", id)
	}
	if _, err := db.ResolveRun(ctx, id); err == nil {
		return invalidf("run %s exists already", id)
	}
	return nil
}

// Started is a run started in a detached orch process.
type Started struct {
	Run string `json:"run"`
	Detached
	Message string `json:"message"`
}

// StartDetached starts a new run of a compiled cuelist in a detached orch
// process (for a caller that must not run it itself: an MCP server), after
// the checks orch run makes before it starts anything: the agents'
// programs, the inputs, the database. The run's id is chosen here, so the
// caller can follow it at once; its output goes to d.Log-RUN.log next to
// the database.
func (c *Controller) StartDetached(ctx context.Context, req StartRequest, d Detach) (*Started, error) {
	p := req.Compiled.Plan
	if err := checkCommands(p); err != nil {
		return nil, err
	}
	if _, err := runInputs(p.Cuelist, req.Sets); err != nil {
		return nil, &Error{Kind: Invalid, Err: err}
	}
	db, dbFile, err := c.open(c.RunPath(req.Compiled.Path)) // made here, as orch run makes it
	if err != nil {
		return nil, err
	}
	id := req.RunID
	if id == "" {
		id = record.NewRunID()
	}
	err = newRunID(ctx, db, id)
	db.Close()
	if err != nil {
		return nil, err
	}
	path, err := filepath.Abs(req.Compiled.Path)
	if err != nil {
		return nil, err
	}
	args := []string{"run", "--run-id", id, "--cuelist", p.Cuelist.ID}
	for _, s := range req.Sets {
		args = append(args, "--set", s)
	}
	if req.MaxParallel > 0 {
		args = append(args, "--max-parallel", strconv.Itoa(req.MaxParallel))
	}
	if req.Root != "" {
		root, err := filepath.Abs(req.Root)
		if err != nil {
			return nil, err
		}
		args = append(args, "--root", root)
	}
	det, err := c.detach(&d, dbFile, id, append(args, "--", path)...)
	if err != nil {
		return nil, err
	}
	return &Started{Run: id, Detached: *det,
		Message: fmt.Sprintf("run %s started in the background (pid %d); its output goes to %s", id, det.PID, det.Log)}, nil
}

// runPaths returns the cuelist file recorded for the run (what a resume
// compiles again) and its project root: root, else the directory given
// (everything was loaded from inside it), else the cuelist file's directory.
func runPaths(path, root string, p *planner.Plan) (specPath, projectRoot string) {
	specPath, _ = filepath.Abs(path)
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		specPath, projectRoot = p.Cuelist.Doc.File.Abs, specPath
	} else {
		projectRoot = filepath.Dir(specPath)
	}
	if root != "" {
		projectRoot = root
	}
	return specPath, projectRoot
}

// CheckInputs says whether sets (key=value, as --set gives them) are inputs
// cl declares, of their defaults' types: what a run of cl would refuse.
func CheckInputs(cl *spec.Cuelist, sets []string) error {
	if _, err := runInputs(cl, sets); err != nil {
		return &Error{Kind: Invalid, Err: err}
	}
	return nil
}

// runInputs applies sets (key=value, as --set gives them) to the
// cuelist's inputs. Only declared inputs may be set; a value takes the
// type of the declared default.
func runInputs(cl *spec.Cuelist, sets []string) (map[string]any, error) {
	inputs := map[string]any{}
	for k, v := range cl.Inputs {
		inputs[k] = v
	}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--set %q: use --set key=value", s)
		}
		def, declared := cl.Inputs[k]
		if !declared {
			names := make([]string, 0, len(cl.Inputs))
			for n := range cl.Inputs {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("--set %s: cuelist %s has no input %q (its inputs: %s)", s, cl.ID, k, orNone(names))
		}
		val, err := typedLike(def, v)
		if err != nil {
			return nil, fmt.Errorf("--set %s: %v", s, err)
		}
		inputs[k] = val
	}
	return inputs, nil
}

func typedLike(def any, v string) (any, error) {
	switch def.(type) {
	case int64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer (the default is one)", v)
		}
		return n, nil
	case float64:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number (the default is one)", v)
		}
		return n, nil
	case bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false (the default is a boolean)", v)
		}
		return b, nil
	}
	return v, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
