// Package planfmt renders a plan: text for people, JSON for tools, Mermaid
// (GitHub renders it) and Graphviz DOT for pictures.
package planfmt

import (
	"encoding/json"
	"io"
	"time"

	"github.com/orch-cli/orch/planner"
)

// Formats lists the output formats of `orch plan`.
var Formats = []string{"text", "json", "mermaid", "dot"}

// JSONPlan is the shape of `orch plan --format json` (documented in the README).
type JSONPlan struct {
	Cuelist      string         `json:"cuelist"`
	Arbitration  string         `json:"arbitration"`
	MaxParallel  int            `json:"max_parallel,omitempty"`
	Cues         []JSONCue      `json:"cues"`
	Edges        []JSONEdge     `json:"edges"`
	Waves        [][]string     `json:"waves"`
	CriticalPath JSONCritical   `json:"critical_path"`
	Conflicts    []JSONConflict `json:"conflicts"`
	Tools        []JSONTools    `json:"tools"`
}

// JSONCue is one cue, in the plan's stable topological order.
type JSONCue struct {
	ID           string   `json:"id"`
	Description  string   `json:"description,omitempty"`
	Agents       []string `json:"agents"`
	Dependencies []string `json:"dependencies"` // cues that must complete first (incl. an auto_follow predecessor)
	After        []string `json:"after"`        // cues the arbitration put first
	AutoFollow   string   `json:"auto_follow,omitempty"`
	Go           string   `json:"go"`
	Wave         int      `json:"wave"` // 1-based
	Priority     int      `json:"priority"`
	Estimate     string   `json:"estimate"`
	Remaining    string   `json:"remaining"`
	Critical     bool     `json:"critical"`
	Claims       []string `json:"claims"`
	Outputs      []string `json:"outputs"`
	// ForEach is a fan-out's list and bounds; its items become tasks
	// CUE[0], CUE[1]... when it runs.
	ForEach *JSONForEach `json:"for_each,omitempty"`
}

// JSONEdge is one edge of the DAG: dependency, auto_follow or arbitration.
type JSONEdge struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Kind    string `json:"kind"`
	Subject string `json:"subject,omitempty"` // arbitration: the resource, agent or output
}

// JSONCritical is the critical path.
type JSONCritical struct {
	Length        string   `json:"length"`
	LengthSeconds float64  `json:"length_seconds"`
	Cues          []string `json:"cues"`
}

// JSONConflict is a decision in the seeds' escalation.conflict form.
type JSONConflict struct {
	ConflictType       string   `json:"conflict_type"`
	CuesInvolved       []string `json:"cues_involved"`
	AgentsInvolved     []string `json:"agents_involved"`
	ResourceInQuestion string   `json:"resource_in_question"`
	Capacity           int      `json:"capacity"`
	ProposedResolution string   `json:"proposed_resolution"`
	Winner             string   `json:"winner"`
	SuggestedWinner    string   `json:"suggested_winner"`
	OrderingEdge       bool     `json:"ordering_edge"`
	Reason             string   `json:"reason"`
}

// JSONTools is an agent's effective tools; by_depth[d] holds depth d.
type JSONTools struct {
	Agent   string     `json:"agent"`
	ByDepth [][]string `json:"by_depth"`
}

// ToJSON converts a plan to its JSON shape.
func ToJSON(p *planner.Plan) JSONPlan {
	out := JSONPlan{Cuelist: p.Cuelist.ID, Arbitration: p.Strategy, MaxParallel: p.Cuelist.MaxParallel,
		Cues: []JSONCue{}, Edges: []JSONEdge{}, Waves: [][]string{}, Conflicts: []JSONConflict{}, Tools: []JSONTools{}}
	for _, c := range p.Order {
		jc := JSONCue{ID: c.ID, Description: c.Description, Agents: nonNil(c.Agents), Dependencies: ids(c.Deps), After: ids(c.After),
			AutoFollow: c.AutoFollow, Go: goMode(c), Wave: c.Wave + 1, Priority: c.Priority, Estimate: c.Estimate.String(),
			Remaining: c.Remaining.String(), Critical: c.Critical, Claims: nonNil(c.Claims), Outputs: nonNil(c.Outputs), ForEach: forEachJSON(c)}
		out.Cues = append(out.Cues, jc)
	}
	for _, e := range Edges(p) {
		out.Edges = append(out.Edges, JSONEdge{From: e.From.ID, To: e.To.ID, Kind: e.Kind, Subject: e.Subject})
	}
	for _, w := range p.Waves {
		out.Waves = append(out.Waves, ids(w))
	}
	out.CriticalPath = JSONCritical{Length: p.Critical.Length.String(), LengthSeconds: p.Critical.Length.Seconds(), Cues: ids(p.Critical.Cues)}
	for _, c := range p.Conflicts {
		jc := JSONConflict{ConflictType: c.Type, CuesInvolved: ids(c.Cues), AgentsInvolved: nonNil(c.Agents), ResourceInQuestion: c.Subject,
			Capacity: c.Capacity, ProposedResolution: c.Strategy, SuggestedWinner: c.SuggestedWinner(), OrderingEdge: c.Ordered, Reason: c.Reason}
		if c.Winner != nil {
			jc.Winner = c.Winner.ID
		}
		out.Conflicts = append(out.Conflicts, jc)
	}
	for _, t := range p.Tools {
		out.Tools = append(out.Tools, JSONTools{Agent: t.Agent, ByDepth: t.ByDepth})
	}
	return out
}

// JSON writes the plan as indented JSON.
func JSON(w io.Writer, p *planner.Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ToJSON(p))
}

// Edge is one edge of the plan's DAG, for the renderers.
type Edge struct {
	From, To *planner.Cue
	Kind     string // dependency, auto_follow or arbitration
	Subject  string
	Critical bool // both ends are consecutive on the critical path
}

// Edges lists the plan's edges in a stable order: by the target's position in
// the plan order, then the source's.
func Edges(p *planner.Plan) []Edge {
	next := map[*planner.Cue]*planner.Cue{}
	for i := 0; i+1 < len(p.Critical.Cues); i++ {
		next[p.Critical.Cues[i]] = p.Critical.Cues[i+1]
	}
	// An arbitration edge winner -> other comes from an ordered conflict
	// between the two; the first conflict's subject names it.
	subject := map[[2]*planner.Cue]string{}
	for _, cf := range p.Conflicts {
		if cf.Ordered && len(cf.Cues) == 2 {
			if k := [2]*planner.Cue{cf.Cues[0], cf.Cues[1]}; subject[k] == "" {
				subject[k] = cf.Subject
			}
		}
	}
	var out []Edge
	for _, c := range p.Order {
		for _, d := range c.Deps {
			kind := "dependency"
			if d.AutoFollow == c.ID {
				kind = "auto_follow"
			}
			out = append(out, Edge{From: d, To: c, Kind: kind, Critical: next[d] == c})
		}
		for _, a := range c.After {
			out = append(out, Edge{From: a, To: c, Kind: "arbitration", Subject: subject[[2]*planner.Cue{a, c}], Critical: next[a] == c})
		}
	}
	return out
}

func ids(cues []*planner.Cue) []string {
	out := make([]string, len(cues))
	for i, c := range cues {
		out[i] = c.ID
	}
	return out
}

// nonNil is s, or an empty list for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func goMode(c *planner.Cue) string {
	if c.Manual() {
		return "manual"
	}
	return "auto"
}

// short prints a duration without trailing zero units: 4m, 1h30m, 500ms.
func short(d time.Duration) string {
	s := d.String()
	for _, suffix := range []string{"m0s", "h0m"} {
		if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
			s = s[:len(s)-len(suffix)+1]
		}
	}
	return s
}
