//go:build clis_e2e && linux

package clis

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// The CLIs the tests drive, pinned. Their native binaries are npm optional
// dependencies: installing needs the registry, running them does not.
var currentCLIs = []string{
	"@anthropic-ai/claude-code@2.1.332",             // claude -p
	"@openai/codex@0.169.0",                         // codex exec
	"@agentclientprotocol/claude-agent-acp@0.101.0", // claude-agent-acp
	"@agentclientprotocol/codex-acp@2.6.0",          // codex-acp (runs codex app-server, its own 0.166.x)
	"@google/gemini-cli@0.61.0",                     // gemini --acp
}

// The adapters' former packages, still published: a prefix of their own,
// because both codex-acp packages install a codex-acp command.
var legacyCLIs = []string{
	"@zed-industries/claude-code-acp@0.16.2", // claude-code-acp
	"@zed-industries/codex-acp@0.16.0",       // codex-acp (native)
}

// inspectorCLI is the MCP Inspector's command line (a real MCP client from
// npm) that drives orch mcp.
var inspectorCLI = []string{"@modelcontextprotocol/inspector-cli@0.21.2"}

// nodeVersion is the Node the CLIs run on (claude-agent-acp and claude-code
// ask for 22 or newer; Debian 12's nodejs is 18), from the registry's
// node-linux-ARCH package.
const nodeVersion = "22.23.3"

// tools are the installed CLIs: the bin directories to put on PATH.
type tools struct {
	node    string // the directory of the pinned node
	current string // node_modules/.bin of currentCLIs
	legacy  string // node_modules/.bin of legacyCLIs
	// inspector is the prefix inspectorCLI is installed in.
	inspector string
}

// installTools installs the pinned packages into the tools cache, once per
// set of pins, and returns where. skip is why the tests cannot run here
// (no npm); err is an install that failed.
func installTools() (t tools, skip string, err error) {
	npm, lookErr := exec.LookPath("npm")
	if lookErr != nil {
		return t, "npm is not installed: the real CLIs come from npm (.ci/run installs Debian's nodejs and npm)", nil
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" {
		return t, "no pinned Node for " + runtime.GOARCH, nil
	}
	cache := os.Getenv("ORCH_TOOLS_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return t, "", fmt.Errorf("the tools cache: %v (set ORCH_TOOLS_CACHE)", err)
		}
		cache = filepath.Join(home, ".cache", "orch-tools")
	}
	sets := []struct {
		name string
		pkgs []string
		bin  *string
	}{
		{"node", []string{"node-linux-" + arch + "@" + nodeVersion}, &t.node},
		{"current", currentCLIs, &t.current},
		{"legacy", legacyCLIs, &t.legacy},
		{"inspector", inspectorCLI, &t.inspector},
	}
	for _, s := range sets {
		dir, err := npmInstall(npm, cache, s.name, s.pkgs)
		if err != nil {
			return t, "", err
		}
		*s.bin = filepath.Join(dir, "node_modules", ".bin")
	}
	t.inspector = filepath.Dir(filepath.Dir(t.inspector))
	return t, "", nil
}

// npmInstall installs pkgs into a prefix named after them in cache, unless
// a previous run did: the prefix is renamed into place only once complete.
func npmInstall(npm, cache, name string, pkgs []string) (string, error) {
	sum := sha256.Sum256([]byte(strings.Join(pkgs, "\n")))
	dir := filepath.Join(cache, "clis", name+"-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), name+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// npm's own cache of the packages' tarballs (about 900 MB for these) is
	// thrown away with the install: the prefix is what is kept.
	npmCache, err := os.MkdirTemp(filepath.Dir(dir), name+".npm-cache-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(npmCache)
	fmt.Fprintf(os.Stderr, "clis: installing %s into %s (once)\n", strings.Join(pkgs, " "), dir)
	cmd := exec.Command(npm, append([]string{"install", "--prefix", tmp, "--cache", npmCache, "--no-audit", "--no-fund",
		"--save-exact", "--loglevel=error"}, pkgs...)...)
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return dir, nil // another test process installed it meanwhile
		}
		return "", err
	}
	return dir, nil
}
