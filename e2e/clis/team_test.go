//go:build clis_e2e && linux

package clis

import (
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/mockmodel"
)

// TestTeam is four CLIs on one feature, each in its own worktree: a plan
// by claude -p, then the code by codex exec and the tests by
// claude-agent-acp at once, then a review by gemini over ACP, from the merge
// of their branches. The plan's outputs reach the others' prompts; each
// branch holds what its CLI wrote.
func TestTeam(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	t.Parallel()
	file := func(path, content string) *mockmodel.File { return &mockmodel.File{Path: path, Content: content} }
	scripts := map[string]mockmodel.Script{
		// claude prices these 31 in / 12 out tokens at 0.00036399999999999996
		// (its float): orch shows $0.000364.
		"plan": {
			{Text: "Planning.", Write: file("PLAN.md", "1. slug.py: slugify(title)\n2. test_slug.py: its tests\n"), InputTokens: 10, OutputTokens: 5},
			{Text: "Planned.\n{\"code_file\": \"slug.py\", \"test_file\": \"test_slug.py\"}", InputTokens: 21, OutputTokens: 7},
		},
		"code": {
			{Text: "Writing the code.", Write: file("slug.py", "def slugify(title):\n    return '-'.join(title.lower().split())\n"), InputTokens: 200, OutputTokens: 30},
			{Text: "Done.\n{\"summary\": \"slug.py\"}", InputTokens: 250, OutputTokens: 10},
		},
		"tests": {
			{Text: "Writing the tests.", Write: file("test_slug.py", "from slug import slugify\nassert slugify('A B') == 'a-b'\n"), InputTokens: 200, OutputTokens: 30},
			{Text: "Done.\n{\"summary\": \"test_slug.py\"}", InputTokens: 250, OutputTokens: 10},
		},
		"review": {
			{Text: "The code matches the plan.\n{\"verdict\": \"approve\"}", InputTokens: 400, OutputTokens: 12},
		},
	}
	w := newWorld(t, scripts, false)
	w.write(map[string]string{"cuelist.yaml": `cuelist:
  id: team
  inputs: {feature: "slugify(title): a URL slug from a title"}
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m}
  limits: {max_cost_usd: 5}
  cues:
    - id: PLAN
      agents: [planner]
    - id: CODE
      agents: [coder]
      dependencies: [PLAN]
    - id: TESTS
      agents: [tester]
      dependencies: [PLAN]
    - id: REVIEW
      agents: [reviewer]
      dependencies: [CODE, TESTS]
---
agent:
  id: planner
  protocol: claude-code
  workspace: worktree
  prompt: |
    ` + mockmodel.Marker("plan") + ` Plan {{.inputs.feature}} in PLAN.md.
  permissions: {read: allow, edit: allow, default: deny}
  provides: [text, code_file, test_file]
---
agent:
  id: coder
  protocol: codex
  workspace: worktree
  requires: [code_file]
  prompt: |
    ` + mockmodel.Marker("code") + ` Following PLAN.md, write {{.inputs.code_file}}.
  permissions: {edit: allow, default: allow}
  provides: [text, summary]
---
agent:
  id: tester
  protocol: acp
  command: [claude-agent-acp]
  workspace: worktree
  requires: [test_file]
  prompt: |
    ` + mockmodel.Marker("tests") + ` Following PLAN.md, write {{.inputs.test_file}}.
  permissions: {read: allow, edit: allow, default: deny}
  provides: [text, summary]
---
agent:
  id: reviewer
  protocol: acp
  command: [gemini, --acp]
  workspace: worktree
  requires: [code_file, test_file]
  prompt: |
    ` + mockmodel.Marker("review") + ` Review {{.inputs.code_file}} and {{.inputs.test_file}} against PLAN.md.
  permissions: {read: allow, default: deny}
  provides: [text, verdict]
`}, true)
	w.run("cuelist.yaml", 0)
	s := w.status()

	// Each branch holds what its CLI wrote, on top of what it started from.
	for cue, files := range map[string][]string{
		"PLAN":   {"PLAN.md"},
		"CODE":   {"PLAN.md", "slug.py"},
		"TESTS":  {"PLAN.md", "test_slug.py"},
		"REVIEW": {"PLAN.md", "slug.py", "test_slug.py"}, // started from the merge of CODE's and TESTS' branches
	} {
		b := s.attemptBranch(t, cue)
		tree := w.git("ls-tree", "--name-only", b)
		for _, f := range files {
			if !strings.Contains(tree, f+"\n") {
				t.Errorf("%s's branch %s lacks %s:\n%s", cue, b, f, tree)
			}
		}
	}
	for _, c := range s.Cues {
		if c.ID == "REVIEW" && c.Outputs["verdict"] != "approve" {
			t.Errorf("REVIEW's outputs: %v, want verdict approve", c.Outputs)
		}
	}
	// The plan's outputs reached the later prompts.
	for _, script := range []string{"code", "tests", "review"} {
		reqs := w.scripted(script)
		if len(reqs) == 0 {
			t.Errorf("script %s was never asked for", script)
			continue
		}
		body := string(reqs[0].Body)
		for _, want := range map[string][]string{"code": {"slug.py"}, "tests": {"test_slug.py"}, "review": {"slug.py", "test_slug.py"}}[script] {
			if !strings.Contains(body, want) {
				t.Errorf("the %s prompt does not name %s", script, want)
			}
		}
	}
	// Each cue's tool calls are in orch logs.
	for cue, what := range map[string]string{"PLAN": "PLAN.md", "CODE": "slug.py", "TESTS": "test_slug.py"} {
		toolLine(t, w.orch("logs", "last", cue).stdout, what)
	}
	// orch status counts what they used: claude's cost, every CLI's tokens.
	if s.CostUSD <= 0 {
		t.Errorf("the team's cost: $%v, want claude's", s.CostUSD)
	}
	if s.InputTokens < 31+450+450 || s.OutputTokens < 12+40+40 {
		t.Errorf("the team's tokens: %d in / %d out, want at least plan's, code's and tests'", s.InputTokens, s.OutputTokens)
	}
	text := w.orch("status", "last").stdout
	contains(t, "orch status", text, "$", " in / ", " out tokens")
	moneyShown(t, text)
}

// TestCostLimit: what an ACP adapter reports it spent counts toward
// limits.max_cost_usd: past it, orch gives no further GO and the run fails.
func TestCostLimit(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	t.Parallel()
	w := newWorld(t, map[string]mockmodel.Script{"work": writeShell}, false)
	w.write(map[string]string{"cuelist.yaml": `cuelist:
  id: limited
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m}
  limits: {max_cost_usd: 0.001}
  cues:
    - id: WORK
      agents: [coder]
    - id: MORE
      agents: [coder]
      dependencies: [WORK]
---
agent:
  id: coder
  protocol: acp
  command: [claude-agent-acp]
  prompt: |
    ` + mockmodel.Marker("work") + ` Write hello.txt, then run a command.
  permissions: {read: allow, edit: allow, execute: allow, default: deny}
  provides: [text, summary]
`}, true)
	r := w.run("cuelist.yaml", 1)
	contains(t, "orch run", r.stdout, "limit max_cost_usd reached")
	for _, c := range w.status().Cues {
		if c.ID == "MORE" && c.State == "completed" {
			t.Errorf("MORE got its GO past the cost limit")
		}
	}
	moneyShown(t, r.stdout)
}
