package spec

import (
	"fmt"
	"strings"
)

// CLIProtocols are the headless coding CLIs orch runs one process per
// attempt, with the executable each runs when the agent has no command.
var CLIProtocols = map[string]string{"claude-code": "claude", "codex": "codex"}

// PermissionGap is a permissions entry a CLI has no flag for: it is not
// enforced, and orch validate says so at the entry.
type PermissionGap struct {
	Kind   string // the permissions key: read, edit, ..., default
	Reason string
}

// claudeTools are Claude Code's tools for each ACP tool kind that has some;
// --allowedTools and --disallowedTools take them.
var claudeTools = map[string][]string{
	"read":    {"Read"},
	"search":  {"Glob", "Grep"},
	"edit":    {"Edit", "Write", "NotebookEdit"},
	"execute": {"Bash"},
	"fetch":   {"WebFetch", "WebSearch"},
}

// CLIPermissionArgs maps an agent's permissions onto the flags of its CLI
// (protocol: claude-code or codex), and lists the entries no flag expresses.
// Neither CLI can ask a person in the middle of a headless run: ask has no
// equivalent anywhere (the CLI refuses what it would have asked for).
func CLIPermissionArgs(a *Agent) ([]string, []PermissionGap) {
	switch a.Protocol {
	case "claude-code":
		return claudePermissions(a.Permissions)
	case "codex":
		return codexPermissions(a.Permissions)
	}
	return nil, nil
}

// claudePermissions: allow and deny list the kind's tools in --allowedTools
// and --disallowedTools; default: allow is --permission-mode
// bypassPermissions (the denied tools stay denied); default: deny is the
// headless default mode, which refuses any tool not allowed.
func claudePermissions(p map[string]string) ([]string, []PermissionGap) {
	var allowed, denied []string
	var args []string
	var gaps []PermissionGap
	for _, kind := range sortedKeys(p) {
		v := p[kind]
		if v == "ask" {
			gaps = append(gaps, PermissionGap{kind, "claude -p cannot ask a person: it refuses what it would ask for"})
			continue
		}
		if kind == "default" {
			if v == "allow" {
				args = append(args, "--permission-mode", "bypassPermissions")
			}
			continue
		}
		tools, ok := claudeTools[kind]
		if !ok {
			gaps = append(gaps, PermissionGap{kind, fmt.Sprintf("Claude Code has no tool of kind %s to %s", kind, v)})
			continue
		}
		if v == "allow" {
			allowed = append(allowed, tools...)
		} else {
			denied = append(denied, tools...)
		}
	}
	if len(allowed) > 0 {
		args = append(args, "--allowedTools", strings.Join(allowed, ","))
	}
	if len(denied) > 0 {
		args = append(args, "--disallowedTools", strings.Join(denied, ","))
	}
	return args, gaps
}

// codexPermissions: codex exec has one sandbox for everything. edit (else
// default) chooses it: allow is --sandbox workspace-write, deny --sandbox
// read-only; fetch (else default) allow turns the workspace-write
// sandbox's network on. Reading, searching and running commands inside the
// sandbox are always allowed: denying them has no equivalent.
func codexPermissions(p map[string]string) ([]string, []PermissionGap) {
	var args []string
	var gaps []PermissionGap
	effective := func(kind string) string {
		if v, ok := p[kind]; ok {
			return v
		}
		return p["default"]
	}
	switch effective("edit") {
	case "allow":
		args = append(args, "--sandbox", "workspace-write")
		if effective("fetch") == "allow" {
			args = append(args, "-c", "sandbox_workspace_write.network_access=true")
		}
	case "deny":
		args = append(args, "--sandbox", "read-only")
	}
	for _, kind := range sortedKeys(p) {
		v := p[kind]
		switch {
		case v == "ask":
			gaps = append(gaps, PermissionGap{kind, "codex exec cannot ask a person: it runs without approvals"})
		case kind == "edit" || kind == "default":
		case kind == "fetch" && v == "allow" && effective("edit") != "allow":
			gaps = append(gaps, PermissionGap{kind, "codex has network access only in its workspace-write sandbox, which edit: allow chooses"})
		case kind == "fetch":
		case (kind == "delete" || kind == "move") && v == effective("edit"):
			// the sandbox edit chose decides, and says the same
		case kind == "delete" || kind == "move":
			gaps = append(gaps, PermissionGap{kind, fmt.Sprintf("codex's sandbox decides %s with edit, which is %s", kind, orUnset(effective("edit")))})
		case v == "deny":
			gaps = append(gaps, PermissionGap{kind, fmt.Sprintf("codex cannot be denied %s: its sandbox always allows it", kind)})
		case kind == "think" || kind == "other":
			gaps = append(gaps, PermissionGap{kind, fmt.Sprintf("codex has no tool of kind %s", kind)})
		}
	}
	return args, gaps
}

func orUnset(v string) string {
	if v == "" {
		return "not set"
	}
	return v
}
