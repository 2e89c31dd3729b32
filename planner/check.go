package planner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orch-cli/orch/spec"
)

// Check adds what planning knows to `orch validate`: every cuelist is planned,
// and its unresolvable conflicts and unknown tool groups are errors; output
// conflicts between cues that may run at the same time are warnings; so are
// agents that no cue, fallback, handoff_to or handoff spec uses. Cuelists with
// a dependency cycle are skipped (spec.Check reports the cycle).
func Check(set *spec.Set) spec.Diagnostics { return checkPlans(set) }

// checkPlans checks every cuelist of set for Check. It does not arbitrate
// (orch plan shows the decisions): it needs only each cuelist's order and
// closure, so validating a 10,000-cue cuelist stays fast.
func checkPlans(set *spec.Set) spec.Diagnostics {
	var diags spec.Diagnostics
	used := map[string]bool{}
	agents := set.AgentIndex()
	for _, cl := range set.Cuelists {
		b := &builder{set: set, agents: agents}
		p := b.skeleton(cl)
		for id := range p.Agents { // a cyclic cuelist uses its agents all the same
			used[id] = true
		}
		g := spec.NewCueGraph(cl)
		adj := &adjacency{succ: make([][]int, len(p.Cues)), pred: make([][]int, len(p.Cues))}
		for _, c := range p.Cues {
			for _, w := range g.Succ[g.Index[c.ID]] {
				if next := p.ByID[cl.Cues[w].ID]; next != nil {
					adj.succ[c.Index] = append(adj.succ[c.Index], next.Index)
					adj.pred[next.Index] = append(adj.pred[next.Index], c.Index)
				}
			}
		}
		order, acyclic := adj.kahn(func(x, y int) bool { return x < y })
		if !acyclic {
			continue // spec.Check reports the cycle
		}
		p.ancestors = adj.ancestors(order)
		for _, bk := range b.buckets(p) {
			if bk.kind == "output" {
				diags = append(diags, outputWarnings(p, bk)...)
			}
		}
		tools := b.tools(p)
		diags = append(diags, b.diags...)
		diags = append(diags, conditionDiags(p, tools)...)
		diags = append(diags, forEachDiags(p)...)
	}
	if len(set.Cuelists) > 0 && !lostCues(set) {
		markMeant(set, agents, used)
		diags = append(diags, unusedAgents(set, used)...)
	}
	return diags
}

// lostCues reports whether a cuelist has no cues, which the schema reports
// (cues missing, misspelled or empty): what its cues used is not known.
func lostCues(set *spec.Set) bool {
	for _, cl := range set.Cuelists {
		if len(cl.Cues) == 0 {
			return true
		}
	}
	return false
}

// markMeant counts as used the agent a misspelled reference in a cue most
// likely meant: the unknown reference is the error, once.
func markMeant(set *spec.Set, agents map[string]*spec.Agent, used map[string]bool) {
	var ids []string
	for _, cl := range set.Cuelists {
		for _, cue := range cl.Cues {
			for _, id := range cue.Agents {
				if agents[id] != nil || id == "" {
					continue
				}
				if ids == nil {
					ids = make([]string, 0, len(agents))
					for known := range agents {
						ids = append(ids, known)
					}
					sort.Strings(ids)
				}
				if meant := spec.Closest(id, ids); meant != "" {
					used[meant] = true
				}
			}
		}
	}
}

// outputWarnings reports each cue of an output bucket that may run at the
// same time as an earlier cue (file order) declaring the same output.
func outputWarnings(p *Plan, bk bucket) spec.Diagnostics {
	var diags spec.Diagnostics
	for i, m := range bk.members {
		cue := p.Cues[m]
		for _, e := range bk.members[:i] {
			earlier := p.Cues[e]
			if !p.Concurrent(earlier, cue) {
				continue
			}
			for j, o := range cue.Outputs {
				if o == bk.subject {
					ptr := spec.Pointer("outputs", j)
					diags.Add(spec.Warning, cue.At(ptr), cue.Ptr+ptr, "output-conflict",
						"cue %s writes %q, which cue %s also writes, and the two may run at the same time (arbitration %s orders them; orch plan shows how)",
						cue.ID, o, earlier.ID, p.Strategy)
				}
			}
			break
		}
	}
	return diags
}

func unusedAgents(set *spec.Set, used map[string]bool) spec.Diagnostics {
	for _, a := range set.Agents {
		if used[a.ID] {
			for _, to := range a.HandoffTo {
				used[to] = true
			}
		}
	}
	for _, h := range set.Handoffs {
		used[h.From], used[h.To] = true, true
	}
	var diags spec.Diagnostics
	for _, a := range set.Agents {
		if !used[a.ID] && a.ID != "" {
			diags.Add(spec.Warning, a.At("/id"), a.Ptr+"/id", "unused-agent",
				"agent %q is not used by any cue of the loaded cuelists, nor as a fallback or handoff target", a.ID)
		}
	}
	return diags
}

// ErrNoCuelist is returned by Compile when the path holds no cuelist.
var ErrNoCuelist = errors.New("no cuelist")

// Compile loads a cuelist file (with its includes), runs every check and
// builds the plan of the cuelist named id ("" when the file holds one). The
// diagnostics are sorted; with errors among them the plan is nil.
func Compile(path, id string, lo spec.LoadOptions) (*spec.Set, *Plan, spec.Diagnostics, error) {
	set, diags, err := spec.Load([]string{path}, lo)
	if err != nil {
		return nil, nil, nil, err
	}
	diags = append(diags, spec.Check(set, spec.CheckOptions{})...)
	cl, err := pick(set, path, id)
	if err != nil {
		return set, nil, diags.Sorted(), err
	}
	diags = append(diags, checkPlans(set)...).Sorted()
	if diags.HasErrors() {
		return set, nil, diags, nil
	}
	p, more := Build(set, cl)
	if more.HasErrors() || p == nil {
		return set, nil, append(diags, more...).Sorted(), nil
	}
	return set, p, diags, nil
}

// pick finds the cuelist to plan: the one with the given id, else the one
// defined in the given file, or below the given directory.
func pick(set *spec.Set, path, id string) (*spec.Cuelist, error) {
	abs, _ := filepath.Abs(path)
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	info, err := os.Stat(path)
	isDir := err == nil && info.IsDir()
	var found []*spec.Cuelist
	for _, cl := range set.Cuelists {
		if id != "" && cl.ID == id {
			return cl, nil
		}
		if cl.Doc.File.Abs == abs || cl.Doc.File.Name == filepath.Clean(path) || isDir && below(abs, cl.Doc.File.Abs) {
			found = append(found, cl)
		}
	}
	switch {
	case id != "":
		return nil, fmt.Errorf("%s: %w with id %q", path, ErrNoCuelist, id)
	case len(found) == 0 && isDir:
		return nil, fmt.Errorf("%s: %w in this directory (a cuelist file has a top-level cuelist: key)", path, ErrNoCuelist)
	case len(found) == 0:
		return nil, fmt.Errorf("%s: %w (a cuelist file has a top-level cuelist: key)", path, ErrNoCuelist)
	case len(found) > 1 && isDir:
		return nil, fmt.Errorf("%s holds %d cuelists; pass one of their files, or choose one with --cuelist ID:%s", path, len(found), listCuelists(found))
	case len(found) > 1:
		return nil, fmt.Errorf("%s holds %d cuelists; choose one with --cuelist ID", path, len(found))
	}
	return found[0], nil
}

// below reports whether file is inside dir (both absolute).
func below(dir, file string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// listCuelists shows each cuelist's id and file, one a line.
func listCuelists(cls []*spec.Cuelist) string {
	width := 0
	for _, cl := range cls {
		width = max(width, len(cl.ID))
	}
	var b strings.Builder
	for _, cl := range cls {
		fmt.Fprintf(&b, "\n  %-*s  %s", width, cl.ID, cl.Doc.File.Name)
	}
	return b.String()
}
