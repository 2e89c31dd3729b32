package sched_test

import (
	"fmt"
	"testing"

	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

func TestRoute(t *testing.T) {
	tr := newTree()
	tr.add("other", tr.tasks.Root("D", &spec.Agent{ID: "other", Protocol: "jsonl"}))
	name := func(id sched.NodeID) string {
		if id == sched.NoNode {
			return "person"
		}
		for n, ref := range tr.nodes {
			if ref == id {
				return n
			}
		}
		return "?"
	}
	for _, tc := range []struct{ from, to, want string }{
		{"dev", "qa", "qa via lead"},         // siblings: directly, the parent looks on
		{"deep", "qa", "qa via lead"},        // across subtrees: the nearest common ancestor
		{"deep", "C/2", "qa via lead"},       // by task id
		{"deep", "lead", "lead via lead"},    // to an ancestor: nobody between
		{"lead", "deep", "deep via lead"},    // to a descendant
		{"other", "deep", "deep via person"}, // different cues: the person
		{"deep", "D", "other via person"},    // a cue's task by the cue id
		{"deep", "nobody", "not found: "},    // the caller says why
		{"other", "sh", "sh via person"},     // found; Working says it cannot receive
	} {
		target, via, found, why := tr.tasks.Route(tr.nodes[tc.from], tc.to)
		got := fmt.Sprintf("not found: %s", why)
		if found {
			got = name(target) + " via " + name(via)
		}
		if got != tc.want {
			t.Errorf("%s -> %s: got %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
	// Several working tasks of one agent: the sender names one.
	tr.add("qa2", tr.tasks.Child(tr.nodes["deep"], &spec.Agent{ID: "qa", Protocol: "jsonl"}, "spawn"))
	if _, _, found, why := tr.tasks.Route(tr.nodes["other"], "qa"); found || why != `"qa" matches 2 working tasks (C/2 (qa), C/1/1/1 (qa)): name one by its task id` {
		t.Errorf("ambiguous: %v %q", found, why)
	}
}
