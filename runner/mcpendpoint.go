package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/orch-cli/orch/runner/mcpbridge"
)

// mcpEndpoint is the run's MCP endpoint (runner/mcpbridge), started with
// the first attempt that gets orch's tools and closed with the run.
type mcpEndpoint struct {
	once sync.Once
	ep   *mcpbridge.Endpoint
	err  error
	shim []string // orch mcp agent, for the agents that take only stdio servers
}

func (m *mcpEndpoint) get() (*mcpbridge.Endpoint, error) {
	m.once.Do(func() {
		m.ep, m.err = mcpbridge.Start(mcpbridge.Options{})
		m.shim = []string{orchPath(), "mcp", "agent"}
	})
	return m.ep, m.err
}

func (m *mcpEndpoint) close() {
	if m.ep != nil {
		_ = m.ep.Close()
	}
}

// orchPath is this orch's executable as an agent can start it from any
// directory: the name it was started by, found on PATH, made absolute.
func orchPath() string {
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	p, _ := os.Executable()
	return p
}

// attachMCP registers an attempt on the run's endpoint: its agent gets
// orch's tools acting as it (driver.Attempt.MCP). The returned func ends
// the registration (the token gets 401).
func (a *attemptRun) attachMCP() func() {
	ep, err := a.r.mcp.get()
	if err != nil {
		a.Note("no MCP tools for this attempt: %v", err)
		return func() {}
	}
	token, unregister := ep.Register(a.Cue.ID+"/"+a.Agent.ID, mcpTask{a})
	a.MCP = &mcpbridge.Attachment{URL: ep.URL(), Token: token, Shim: a.r.mcp.shim, Own: a.Agent.MCPServers, Getenv: os.Getenv}
	return unregister
}
