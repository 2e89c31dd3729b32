package runner

import (
	"context"
	"sync"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/mcpbridge"
)

// inboxPeer is how the hub reaches an agent that takes no jsonl messages
// but has orch's MCP tools (a coding agent, a plain process): what it is
// sent — messages, broadcasts, watched keys' changes, announcements — is
// recorded and waits in its inbox (the inbox tool, orch inbox).
type inboxPeer struct {
	a       *attemptRun
	mu      sync.Mutex
	notices []mcpbridge.Notice
	arrived chan struct{} // signalled when a notice arrives
}

var _ driver.Peer = (*inboxPeer)(nil)

func newInboxPeer(a *attemptRun) *inboxPeer {
	return &inboxPeer{a: a, arrived: make(chan struct{}, 1)}
}

func (p *inboxPeer) Send(m protocols.Message) *attempt.Failure {
	if f := p.a.Record("out", driver.Encode(m)); f != nil {
		return f
	}
	return p.Write(m)
}

func (p *inboxPeer) Write(m protocols.Message) *attempt.Failure {
	p.mu.Lock()
	p.notices = append(p.notices, mcpbridge.Notice{Type: m.Type, Body: m.Body})
	p.mu.Unlock()
	select {
	case p.arrived <- struct{}{}:
	default:
	}
	return nil
}

// Expect refuses: an inbox is read when the agent likes, so nothing sent
// there can wait for an answer (a question is asked of the person instead).
func (p *inboxPeer) Expect(string, func(*driver.Wire)) *attempt.Failure {
	return attempt.Failf("internal", "%s reads its messages through its inbox: it answers none", p.a.Agent.ID)
}

func (p *inboxPeer) Unexpect(string) {}

// take returns the notices waiting, waiting up to wait for one.
func (p *inboxPeer) take(ctx context.Context, wait time.Duration) []mcpbridge.Notice {
	grab := func() []mcpbridge.Notice {
		p.mu.Lock()
		defer p.mu.Unlock()
		n := p.notices
		p.notices = nil
		return n
	}
	if n := grab(); len(n) > 0 || wait <= 0 {
		return n
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-p.arrived:
	case <-t.C:
	case <-ctx.Done():
	case <-p.a.ended:
	}
	return grab()
}
