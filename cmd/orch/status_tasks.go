package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// treeRow is one line of the cue table: a cue, or a child task drawn under
// the task that started it.
type treeRow struct {
	cue    *store.CueDetail
	prefix string // the tree's lines before a child's id ("  ├─ ", "  │  └─ ")
}

// cueTree orders a run's cues for orch status: each plan cue in plan order,
// followed by its child tasks (handoffs and spawns) and a fan-out's items
// as a tree, each level in the order the children started (items: in item
// order). A child whose parent is missing (it
// should not happen) is listed at the end rather than lost.
func cueTree(cues []store.CueDetail) []treeRow {
	children := map[string][]*store.CueDetail{}
	ids := make(map[string]bool, len(cues))
	for i := range cues {
		ids[cues[i].ID] = true
	}
	var roots, orphans []*store.CueDetail
	for i := range cues {
		c := &cues[i]
		switch {
		case c.Kind == "dropped": // an item of an earlier expansion: kept in the record, not the run's any more
		case c.Parent == "":
			roots = append(roots, c)
		case ids[c.Parent]:
			children[c.Parent] = append(children[c.Parent], c)
		default:
			orphans = append(orphans, c)
		}
	}
	rows := make([]treeRow, 0, len(cues))
	var walk func(c *store.CueDetail, indent string)
	walk = func(c *store.CueDetail, indent string) {
		kids := children[c.ID]
		for i, k := range kids {
			branch, next := "├─ ", "│  "
			if i == len(kids)-1 {
				branch, next = "└─ ", "   "
			}
			rows = append(rows, treeRow{cue: k, prefix: indent + branch})
			walk(k, indent+next)
		}
	}
	for _, c := range roots {
		rows = append(rows, treeRow{cue: c})
		walk(c, "  ")
	}
	for _, c := range orphans {
		rows = append(rows, treeRow{cue: c, prefix: "?─ "})
		walk(c, "   ")
	}
	return rows
}

// printEscalations lists the high and critical escalations not yet
// acknowledged, with the command that acknowledges them: they did not
// stop their agent, but someone should see them.
func printEscalations(w io.Writer, r *store.RunDetail) {
	var open []store.Escalation
	for _, es := range r.Escalations {
		if es.AckedAt.IsZero() {
			open = append(open, es)
		}
	}
	if len(open) == 0 {
		return
	}
	fmt.Fprintf(w, "\nescalations not yet acknowledged (%d)\n", len(open))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, es := range open {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\tsent %s\t%s\n", es.ID, es.Severity, es.Agent, es.Cue, ago(es.At), oneLine(es.Text, 80))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "  acknowledge with: orch ack %s ID\n", r.ID)
}

// printQuestions lists the run's open questions in full (the complexity
// first, as a person decides by it which to open), with the command that
// answers those asked of the person, and the closed ones in a line each.
func printQuestions(w io.Writer, r *store.RunDetail) {
	var open, closed []store.QuestionDetail
	for _, q := range r.Questions {
		if q.State == store.QuestionOpen {
			open = append(open, q)
		} else {
			closed = append(closed, q)
		}
	}
	if len(open) > 0 {
		fmt.Fprintf(w, "\nopen questions (%d)\n", len(open))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, q := range open {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\tasked %s\t%s\n", q.ID, q.Complexity, q.Agent, q.Cue, ago(q.AskedAt), oneLine(q.Question, 80))
		}
		_ = tw.Flush()
		for _, q := range open {
			if q.To == "person" {
				fmt.Fprintf(w, "  answer %s with: orch answer %s %s TEXT\n", q.ID, r.ID, q.ID)
			} else {
				fmt.Fprintf(w, "  %s was asked of %s (the parent of %s)\n", q.ID, q.To, q.Agent)
			}
		}
	}
	if len(closed) > 0 {
		fmt.Fprintf(w, "\nclosed questions (%d)\n", len(closed))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, q := range closed {
			how := q.State
			switch {
			case q.State == record.QuestionAnswered:
				how = fmt.Sprintf("answered by %s: %s", q.By, oneLine(q.Answer, 60))
			case q.Reason != "":
				how += ": " + oneLine(q.Reason, 60)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", q.ID, q.Complexity, q.Agent, q.Cue, how)
		}
		_ = tw.Flush()
	}
}
