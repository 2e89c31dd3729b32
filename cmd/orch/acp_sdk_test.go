//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// acpSDK is the reference Go SDK of the Agent Client Protocol, whose example
// agent the ACP driver is tested against.
const acpSDK = "github.com/coder/acp-go-sdk@v0.13.0"

// TestACPAgainstSDKExampleAgent runs a cue on acp-go-sdk's example agent
// (example/agent: message chunks, tool calls, a permission request for an
// edit), built from the module cache: the driver speaks ACP as the reference
// implementation does. Skipped when the module is not in the cache (go mod
// download github.com/coder/acp-go-sdk@v0.13.0 puts it there).
func TestACPAgainstSDKExampleAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds acp-go-sdk's example agent")
	}
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(cache)), filepath.FromSlash(acpSDK))
	if _, err := os.Stat(filepath.Join(src, "example", "agent", "main.go")); err != nil {
		t.Skipf("%s is not in the module cache: %v", acpSDK, err)
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "sdk-agent")
	build := exec.Command("go", "build", "-o", agent, "./example/agent")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot build the example agent offline: %v\n%s", err, out)
	}
	files := writeFiles(t, map[string]string{"cuelist.yaml": `agent:
  id: sdk
  protocol: acp
  command: [` + agent + `]
  prompt: "Improve the configuration of {{.inputs.project}}."
  permissions: {read: allow, edit: allow, default: deny}
---
cuelist:
  id: sdk
  inputs: {project: demo}
  defaults: {ack_timeout: 30s, timeout: 5m}
  cues:
    - {id: a, agents: [sdk]}
`})
	db := filepath.Join(dir, "orch.db")
	code, stdout, stderr := runOrch(t, "", "run", "--db", db, filepath.Join(files, "cuelist.yaml"))
	if code != exitOK || !strings.Contains(stdout, "completed in") {
		t.Fatalf("orch run: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, `permission for edit "Modifying critical configuration file": Allow this change (allow, by the permissions policy)`) {
		t.Errorf("no permission decision by the policy:\n%s", stdout)
	}
	_, logs, _ := runOrch(t, "", "logs", "--db", db, "last")
	// Its tool calls' content (an array) shows below them.
	for _, want := range []string{"ACP Go Example Agent", "tool: Reading project files [read] pending (/project/README.md)",
		"tool: Reading project files [read] completed\n", "  # My Project\n", "tool: Modifying critical configuration file [edit] completed\n"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs lack %q:\n%s", want, logs)
		}
	}
}
