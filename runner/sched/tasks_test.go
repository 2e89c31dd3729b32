package sched_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// tree is a Tasks over attempts named by strings, with a fake clock: lead
// (jsonl) works on cue C; its children dev and qa (jsonl) and sh (a plain
// process) work under it; deep works under dev.
type tree struct {
	tasks   *sched.Tasks[string]
	inGo    map[string]bool
	nodes   map[string]sched.NodeID
	now     time.Time
	timeout time.Duration
}

func newTree() *tree {
	tr := &tree{inGo: map[string]bool{}, nodes: map[string]sched.NodeID{}, now: t0, timeout: time.Minute}
	tr.tasks = sched.NewTasks(sched.TasksConfig[string]{
		Working: func(a string) bool { return tr.inGo[a] },
		Speaks:  func(a *spec.Agent) bool { return a.Protocol == "jsonl" },
	})
	agent := func(id, protocol string) *spec.Agent { return &spec.Agent{ID: id, Protocol: protocol} }
	tr.add("lead", tr.tasks.Root("C", agent("lead", "jsonl")))
	tr.add("dev", tr.tasks.Child(tr.nodes["lead"], agent("dev", "jsonl"), "handoff"))
	tr.add("qa", tr.tasks.Child(tr.nodes["lead"], agent("qa", "jsonl"), "spawn"))
	tr.add("sh", tr.tasks.Child(tr.nodes["lead"], agent("sh", ""), "spawn"))
	tr.add("deep", tr.tasks.Child(tr.nodes["dev"], agent("deep", "jsonl"), "handoff"))
	return tr
}

// add serves a task with an attempt named like its agent, in GO.
func (tr *tree) add(name string, t sched.Task) {
	tr.nodes[name] = t.Node
	tr.tasks.Serve(t.Node, name)
	tr.inGo[name] = true
}

func render(q sched.Question[string], ok bool) string {
	if !ok {
		return "closed"
	}
	to := q.To
	if q.WithPerson() {
		to = "person"
	}
	return fmt.Sprintf("%s from %s to %s due %s", q.ID, q.Asker, to, q.Deadline.Sub(t0))
}

func TestTaskTree(t *testing.T) {
	tr := newTree()
	for _, tc := range []struct {
		name string
		do   func() string
		want string
	}{
		{"attempts at work", func() string {
			var out []string
			for _, n := range []string{"lead", "dev", "qa", "sh", "deep"} {
				w, _ := tr.tasks.Working(tr.nodes[n])
				out = append(out, w)
			}
			return strings.Join(out, " ")
		}, "lead dev qa  deep"},
		{"a plain process receives nothing", func() string { _, why := tr.tasks.Working(tr.nodes["sh"]); return why },
			"sh is a plain process (protocol none): it cannot receive messages"},
		{"sibling by agent", func() string {
			n, why := tr.tasks.Sibling(tr.nodes["dev"], "qa")
			return fmt.Sprint(n == tr.nodes["qa"], why)
		}, "true"},
		{"sibling by task id", func() string {
			n, why := tr.tasks.Sibling(tr.nodes["dev"], "C/2")
			return fmt.Sprint(n == tr.nodes["qa"], why)
		}, "true"},
		{"no such sibling", func() string { _, why := tr.tasks.Sibling(tr.nodes["dev"], "deep"); return why },
			`no sibling named "deep" (siblings: C/2 (qa), C/3 (sh))`},
		{"an only child has no siblings", func() string { _, why := tr.tasks.Sibling(tr.nodes["deep"], "x"); return why },
			`no sibling named "x": task C/1/1 has no siblings`},
		{"an ended task", func() string {
			tr.tasks.End(tr.nodes["qa"], "completed")
			_, why := tr.tasks.Working(tr.nodes["qa"])
			return why
		}, "qa ended (task C/2 completed)"},
		{"an ended sibling is still found, not working", func() string {
			n, why := tr.tasks.Sibling(tr.nodes["dev"], "qa")
			return fmt.Sprint(n == tr.nodes["qa"], why)
		}, "true"},
		{"a task served again works again", func() string {
			tr.tasks.Serve(tr.nodes["qa"], "qa#2")
			tr.inGo["qa#2"] = true
			w, _ := tr.tasks.Working(tr.nodes["qa"])
			return w
		}, "qa#2"},
		{"a resumed run numbers after the recorded children", func() string {
			tr.tasks.Continue([]string{"C/7", "C/1/3", "X"}, 4)
			c := tr.tasks.Child(tr.nodes["lead"], &spec.Agent{ID: "dev"}, "spawn")
			d := tr.tasks.Child(tr.nodes["dev"], &spec.Agent{ID: "x"}, "spawn")
			return fmt.Sprint(c.ID, " ", d.ID, " ", d.Depth, " ", strings.Join(d.Chain, ">"))
		}, "C/8 C/1/4 2 lead>dev>x"},
	} {
		if got := tc.do(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestQuestions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps func(tr *tree) []string
		want  []string
	}{
		{"bubbles to the parent at work", func(tr *tree) []string {
			return []string{render(tr.tasks.Ask(tr.now, tr.nodes["deep"], "deep", tr.timeout), true)}
		}, []string{"q1 from deep to dev due 1m0s"}},
		{"skips an ancestor not in GO", func(tr *tree) []string {
			tr.inGo["dev"] = false
			return []string{render(tr.tasks.Ask(tr.now, tr.nodes["deep"], "deep", tr.timeout), true)}
		}, []string{"q1 from deep to lead due 1m0s"}},
		{"a root's question goes to the person", func(tr *tree) []string {
			return []string{render(tr.tasks.Ask(tr.now, tr.nodes["lead"], "lead", tr.timeout), true)}
		}, []string{"q1 from lead to person due 1m0s"}},
		{"nobody at work above: the person", func(tr *tree) []string {
			tr.tasks.End(tr.nodes["lead"], "failed")
			return []string{render(tr.tasks.Ask(tr.now, tr.nodes["qa"], "qa", tr.timeout), true)}
		}, []string{"q1 from qa to person due 1m0s"}},
		{"answered once", func(tr *tree) []string {
			tr.tasks.Ask(tr.now, tr.nodes["qa"], "qa", tr.timeout)
			a, ok := tr.tasks.Answer("q1")
			_, again := tr.tasks.Answer("q1")
			return []string{render(a, ok), fmt.Sprint(again), fmt.Sprint(tr.tasks.NextDeadline().IsZero())}
		}, []string{"q1 from qa to lead due 1m0s", "false", "true"}},
		{"the person's answer waits while an agent has it", func(tr *tree) []string {
			tr.tasks.Ask(tr.now, tr.nodes["qa"], "qa", tr.timeout)
			_, withAgent, ok := tr.tasks.PersonAnswers("q1")
			tr.tasks.ToPerson("q1") // the agent could not take it
			q, withAgent2, ok2 := tr.tasks.PersonAnswers("q1")
			return []string{fmt.Sprint(withAgent, ok), render(q, ok2), fmt.Sprint(withAgent2)}
		}, []string{"true true", "q1 from qa to person due 1m0s", "false"}},
		{"times out at its deadline, oldest first", func(tr *tree) []string {
			tr.tasks.Ask(tr.now, tr.nodes["qa"], "qa", tr.timeout)
			tr.tasks.Ask(tr.now.Add(time.Second), tr.nodes["lead"], "lead", tr.timeout)
			tr.tasks.Ask(tr.now, tr.nodes["dev"], "dev", 2*tr.timeout)
			out := []string{fmt.Sprint(tr.tasks.NextDeadline().Sub(t0)), fmt.Sprint(len(tr.tasks.Due(t0.Add(59 * time.Second))))}
			for _, q := range tr.tasks.Due(t0.Add(61 * time.Second)) {
				out = append(out, render(q, true))
			}
			_, ok := tr.tasks.Answer("q1")
			return append(out, fmt.Sprint(ok), fmt.Sprint(tr.tasks.NextDeadline().Sub(t0)))
		}, []string{"1m0s", "0", "q1 from qa to lead due 1m0s", "q2 from lead to person due 1m1s", "false", "2m0s"}},
		{"withdrawn with its asker's attempt", func(tr *tree) []string {
			tr.tasks.Ask(tr.now, tr.nodes["qa"], "qa", tr.timeout)
			tr.tasks.Ask(tr.now, tr.nodes["dev"], "dev", tr.timeout)
			tr.tasks.Ask(tr.now, tr.nodes["qa"], "qa", tr.timeout)
			var out []string
			for _, q := range tr.tasks.Withdraw("qa") {
				out = append(out, q.ID)
			}
			_, open := tr.tasks.Answer("q2")
			return append(out, fmt.Sprint(open))
		}, []string{"q1", "q3", "true"}},
		{"a resumed run asks after the recorded questions", func(tr *tree) []string {
			tr.tasks.Continue(nil, 5)
			return []string{render(tr.tasks.Ask(tr.now, tr.nodes["lead"], "lead", tr.timeout), true), fmt.Sprint(tr.tasks.Asked())}
		}, []string{"q6 from lead to person due 1m0s", "6"}},
	} {
		got := tc.steps(newTree())
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestCredits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		head  string
		add   []float64
		total float64
		limit string
	}{
		{"no limit", "", []float64{5, 50}, 55, ""},
		{"under the limit", "  limits: {max_credits: 10}\n", []float64{4, 5.5}, 9.5, ""},
		{"at the limit", "  limits: {max_credits: 10}\n", []float64{4, 6, 1}, 11, "max_credits 10 of 10"},
		{"resumed with credits used", "  limits: {max_credits: 10}\n", []float64{-1, 2}, 10, "max_credits 10 of 10"},
	} {
		h := newHarness(t, tc.head, "    - {id: A, agents: [a]}\n", protoAgents, 4, false)
		var total float64
		for i, c := range tc.add {
			if c < 0 { // a resume: the recorded total
				h.core.RestoreUsage(8, 0)
				continue
			}
			h.core.AddUsage(c, 0)
			total, _ = h.core.Used()
			if l := h.core.Exhausted(); l != nil && i == 0 {
				t.Errorf("%s: exhausted after %v", tc.name, c)
			}
		}
		got := ""
		if l := h.core.Exhausted(); l != nil {
			got = fmt.Sprintf("%s %v of %v", l.Name, l.Credits, l.MaxCredits)
		}
		if total != tc.total || got != tc.limit {
			t.Errorf("%s: total %v, limit %q; want %v, %q", tc.name, total, got, tc.total, tc.limit)
		}
	}
}

// Out of a limit, a cue standing by gets no GO.
func TestExhaustedGivesNoGo(t *testing.T) {
	h := newHarness(t, "  limits: {max_duration: 1m}\n", "    - {id: A, agents: [a]}\n", protoAgents, 4, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "A warning", "start A/0#1 a")
	h.want("A warned", h.warned("A"), "A standby", "standby A/0")
	h.core.CheckDuration(t0.Add(59 * time.Second))
	if h.core.Exhausted() != nil {
		t.Fatal("exhausted before max_duration")
	}
	h.core.CheckDuration(t0.Add(time.Minute))
	l := h.core.Exhausted()
	if l == nil || l.Name != "max_duration" || l.Used != time.Minute || l.Max != time.Minute {
		t.Fatalf("limit %+v", l)
	}
	h.want("A ready", h.ready("A"))
}

// TestCostLimit: max_cost_usd is counted like max_credits, from what the
// attempts reported since their last report, a resumed run's cost included.
func TestCostLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restore float64
		add     []float64
		limit   string
	}{
		{"under the limit", 0, []float64{0.25, 0.5}, ""},
		{"at the limit", 0, []float64{0.5, 0.5}, "max_cost_usd 1 of 1"},
		{"resumed with cost", 0.75, []float64{0.25}, "max_cost_usd 1 of 1"},
	} {
		h := newHarness(t, "  limits: {max_cost_usd: 1}\n", "    - {id: A, agents: [a]}\n", protoAgents, 4, false)
		h.core.RestoreUsage(0, tc.restore)
		for _, c := range tc.add {
			h.core.AddUsage(0, c)
		}
		got := ""
		if l := h.core.Exhausted(); l != nil {
			got = fmt.Sprintf("%s %v of %v", l.Name, l.CostUSD, l.MaxCostUSD)
		}
		if got != tc.limit {
			t.Errorf("%s: limit %q, want %q", tc.name, got, tc.limit)
		}
	}
}

// TestInGo lists the tasks in GO, in creation order: not one that ended,
// nor one whose attempt is not in GO (plain processes included).
func TestInGo(t *testing.T) {
	tr := newTree()
	tr.tasks.End(tr.nodes["qa"], "completed")
	tr.inGo["deep"] = false
	if got := strings.Join(tr.tasks.InGo(), " "); got != "lead dev sh" {
		t.Errorf("InGo = %q, want lead dev sh", got)
	}
}
