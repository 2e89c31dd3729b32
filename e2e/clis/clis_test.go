//go:build clis_e2e && linux

package clis

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/mockmodel"
)

// cli is one way orch drives a coding CLI.
type cli struct {
	name   string
	agent  string // the agent's protocol and command, YAML
	legacy bool   // a former name: in the workdir only (the former packages' bin directory first on PATH)
	// What it reports: a cost in US dollars (claude's result, ACP's
	// usage_update cost), tokens (claude's and codex's streams, the ACP
	// prompt response's usage). claude-code-acp 0.16 reports neither,
	// codex-acp 0.16 only its context window's fill (usage_update used and
	// size), gemini only in its response's _meta.
	cost   bool
	tokens bool
	// existing: the file it writes is in the project beforehand. gemini
	// 0.61.0 over ACP cannot create a file through the client: its
	// write_file reads the file first and takes the client's "Resource not
	// found" (-32002) for a failure (its ACP connection rejects with the
	// plain error object, which its ENOENT check does not recognise).
	existing bool
}

var (
	claudeCode = cli{name: "claude-code", agent: "protocol: claude-code", cost: true, tokens: true}
	codex      = cli{name: "codex", agent: "protocol: codex", tokens: true}
	claudeACP  = cli{name: "claude-agent-acp", agent: "protocol: acp\n  command: [claude-agent-acp]", cost: true, tokens: true}
	codexACP   = cli{name: "codex-acp", agent: "protocol: acp\n  command: [codex-acp]", tokens: true}
	geminiACP  = cli{name: "gemini", agent: "protocol: acp\n  command: [gemini, --acp]", existing: true}
	// The former names: the adapters' @zed-industries packages, gemini's flag.
	legacyClaudeACP = cli{name: "claude-code-acp", agent: "protocol: acp\n  command: [claude-code-acp]", legacy: true}
	legacyCodexACP  = cli{name: "codex-acp-0.16", agent: "protocol: acp\n  command: [codex-acp]", legacy: true}
	legacyGeminiACP = cli{name: "gemini-experimental-acp", agent: "protocol: acp\n  command: [gemini, --experimental-acp]", legacy: true, existing: true}
)

// writeShell is the script of the one-cue cases: the CLI's edit tool
// writes hello.txt, its shell writes shell.txt, then a reply; 450 tokens
// in and 55 out in all.
var writeShell = mockmodel.Standard["write-shell"]

const (
	helloText = "hello from the mock model\n"
	shellText = "shell was here\n"
)

// oneCue is a cuelist of one cue whose agent follows the script "work".
func oneCue(c cli, workspace, permissions string) string {
	ws := ""
	if workspace == "worktree" {
		ws = "\n  workspace: worktree"
	}
	return fmt.Sprintf(`cuelist:
  id: one
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m}
  cues:
    - id: WORK
      agents: [coder]
---
agent:
  id: coder
  %s%s
  prompt: |
    %s Write hello.txt, then run a command.
  permissions: %s
  provides: [text, summary]
`, c.agent, ws, mockmodel.Marker("work"), permissions)
}

// TestOneCue runs each CLI on one cue, in the project's directory and in a
// worktree: the files its tools wrote, its tool calls in orch logs, its
// usage in orch status, what the model was asked.
func TestOneCue(t *testing.T) {
	for _, c := range []cli{claudeCode, codex, claudeACP, codexACP, geminiACP, legacyClaudeACP, legacyCodexACP, legacyGeminiACP} {
		for _, ws := range []string{"workdir", "worktree"} {
			if c.legacy && ws == "worktree" {
				continue
			}
			t.Run(c.name+"/"+ws, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, map[string]mockmodel.Script{"work": writeShell}, c.legacy)
				files := map[string]string{"cuelist.yaml": oneCue(c, ws, "{read: allow, edit: allow, execute: allow, default: deny}")}
				if c.existing {
					files["hello.txt"] = "to be replaced\n"
				}
				w.write(files, true)
				w.run("cuelist.yaml", 0)
				s := w.status()
				where := w.dir
				if ws == "worktree" {
					b := s.attemptBranch(t, "WORK")
					contains(t, "hello.txt on "+b, w.git("show", b+":hello.txt"), helloText)
					contains(t, "shell.txt on "+b, w.git("show", b+":shell.txt"), shellText)
					where = filepath.Join(w.dir, ".orch", "worktrees", s.ID)
				} else {
					contains(t, "hello.txt", w.file("hello.txt"), helloText)
					contains(t, "shell.txt", w.file("shell.txt"), shellText)
				}
				// The model was taken through the script, from the attempt's workspace.
				reqs := followed(t, w, "work", len(writeShell))
				for _, r := range reqs {
					if !strings.HasPrefix(r.Cwd, where) {
						t.Errorf("request %s came from %q, want a directory in %s", r.Path, r.Cwd, where)
					}
				}
				logs := w.orch("logs", "last").stdout
				toolLine(t, logs, "hello.txt")
				toolLine(t, logs, "shell was here")
				usage(t, w, c, s, 450, 55)
			})
		}
	}
}

// followed checks that the CLI took the script's turns in order (it may
// send its last request again: claude-agent-acp asks for a prompt
// suggestion after a turn) and returns the requests.
func followed(t *testing.T, w *world, script string, turns int) []mockmodel.Request {
	t.Helper()
	reqs := w.scripted(script)
	ok := len(reqs) >= turns
	for i, r := range reqs {
		if ok && r.Turn != min(i, turns-1) {
			ok = false
		}
	}
	if !ok {
		t.Errorf("the model was not taken through the %d turns of script %q:\n%s", turns, script, describe(reqs))
	}
	return reqs
}

// toolLine fails unless orch logs shows a tool call naming what, in its
// line ("tool: Write hello.txt [edit] completed") or in its content, the
// indented lines below it ("  edit hello.txt: new file, 1 line").
func toolLine(t *testing.T, logs, what string) {
	t.Helper()
	inTool := false
	for _, l := range strings.Split(logs, "\n") {
		_, text, _ := strings.Cut(l, "] ") // after [CUE agent#N stdout]
		switch {
		case strings.HasPrefix(text, "tool"):
			inTool = true
		case !strings.HasPrefix(text, "  "):
			inTool = false
		}
		if inTool && strings.Contains(text, what) {
			return
		}
	}
	t.Errorf("orch logs shows no tool call naming %q:\n%s", what, logs)
}

// usage checks what orch status says the CLI used, in JSON and as text.
func usage(t *testing.T, w *world, c cli, s status, in, out int64) {
	t.Helper()
	text := w.orch("status", "last").stdout
	if c.tokens {
		if s.InputTokens != in || s.OutputTokens != out {
			t.Errorf("orch status: %d in / %d out tokens, want %d / %d", s.InputTokens, s.OutputTokens, in, out)
		}
		contains(t, "orch status", text, fmt.Sprintf("%d in / %d out tokens", in, out))
	}
	if c.cost {
		if s.CostUSD <= 0 {
			t.Errorf("orch status: cost $%v, want what %s reported", s.CostUSD, c.name)
		}
		contains(t, "orch status", text, "$")
	}
	moneyShown(t, text)
}

var dollars = regexp.MustCompile(`\$([0-9][0-9.]*)`)

// moneyShown fails on an amount printed with more than cents (or, under a
// cent, more than 4 significant digits): $0.029849999999999998.
func moneyShown(t *testing.T, text string) {
	t.Helper()
	var bad []string
	for _, m := range dollars.FindAllStringSubmatch(text, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		_, decimals, _ := strings.Cut(m[1], ".")
		significant := strings.TrimLeft(strings.ReplaceAll(m[1], ".", ""), "0")
		if (v >= 0.01 && len(decimals) > 2) || (v < 0.01 && len(significant) > 4) {
			bad = append(bad, m[0])
		}
	}
	if len(bad) > 0 {
		t.Errorf("orch status prints %s: money is shown to the cent, or 4 significant digits under a cent\n%s", strings.Join(bad, ", "), text)
	}
}
