package mcpbridge

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/protocols/agent"
)

// fakeTask is a Task on its own: a blackboard in memory, an inbox, a
// question answered through answers, a handoff that completes with the
// context it was given. It keeps every call, refused ones apart.
type fakeTask struct {
	agent       string
	denied      map[string]string // family -> why
	answers     chan string
	policyAsked atomic.Int32 // Denied calls

	mu       sync.Mutex
	board    map[string]protocols.BoardEntry
	notices  []Notice
	arrived  chan struct{} // signalled when a notice arrives
	release  chan struct{} // when set, a waiting inbox returns only when it is closed
	memory   map[string]int64
	status   []protocols.StatusReport
	escal    []Escalation
	calls    []string
	refused  []string
	sent     []protocols.MessageSend
	spawned  int
	asked    []Question
	handoffs []protocols.TaskHandoff
}

func newFakeTask(agent string) *fakeTask {
	return &fakeTask{agent: agent, denied: map[string]string{}, answers: make(chan string, 1),
		board: map[string]protocols.BoardEntry{}, memory: map[string]int64{}, arrived: make(chan struct{}, 1)}
}

func (f *fakeTask) called(name string) {
	f.mu.Lock()
	f.calls = append(f.calls, name)
	f.mu.Unlock()
}

func (f *fakeTask) Denied(family string) string {
	f.policyAsked.Add(1)
	return f.denied[family]
}

func (f *fakeTask) Refused(tool, reason string) {
	f.mu.Lock()
	f.refused = append(f.refused, tool+": "+reason)
	f.mu.Unlock()
}

func (f *fakeTask) BlackboardRead(_ context.Context, req protocols.BlackboardRead) (protocols.BlackboardValue, error) {
	f.called("blackboard_read")
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.board[req.Key]
	if !ok {
		return protocols.BlackboardValue{Key: req.Key}, nil
	}
	return protocols.BlackboardValue{Key: req.Key, Found: true, Value: e.Value, Version: e.Version, Author: e.Author}, nil
}

func (f *fakeTask) BlackboardWrite(_ context.Context, req protocols.BlackboardWrite) (protocols.BlackboardAck, error) {
	f.called("blackboard_write")
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.board[req.Key]
	if req.ExpectedVersion != nil && *req.ExpectedVersion != cur.Version {
		return protocols.BlackboardAck{}, &agent.ConflictError{Key: req.Key, Expected: *req.ExpectedVersion, CurrentVersion: cur.Version, Author: cur.Author}
	}
	e := protocols.BoardEntry{Value: req.Value, Version: cur.Version + 1, Author: f.agent}
	f.board[req.Key] = e
	return protocols.BlackboardAck{Key: req.Key, Version: e.Version}, nil
}

func (f *fakeTask) BlackboardList(_ context.Context, prefix string) ([]BoardKey, error) {
	f.called("blackboard_list")
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []BoardKey
	for k, e := range f.board {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, BoardKey{Key: k, Version: e.Version, Author: e.Author})
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Key < keys[j].Key })
	return keys, nil
}

func (f *fakeTask) Ask(ctx context.Context, q Question) (protocols.QuestionAnswer, error) {
	f.called("ask")
	f.mu.Lock()
	f.asked = append(f.asked, q)
	f.mu.Unlock()
	select {
	case a := <-f.answers:
		return protocols.QuestionAnswer{Answer: a}, nil
	case <-ctx.Done():
		f.called("ask ended: " + ctx.Err().Error())
		return protocols.QuestionAnswer{}, fmt.Errorf("the question closed unanswered: %w", ctx.Err())
	}
}

func (f *fakeTask) SendMessage(_ context.Context, req protocols.MessageSend) (protocols.MessageSent, error) {
	f.called("send_message")
	if req.To == "gone" {
		return protocols.MessageSent{}, fmt.Errorf("message to gone not delivered: %w: task gone has ended", agent.ErrNotDelivered)
	}
	f.mu.Lock()
	f.sent = append(f.sent, req)
	f.mu.Unlock()
	return protocols.MessageSent{To: req.To}, nil
}

func (f *fakeTask) Broadcast(_ context.Context, req protocols.BroadcastSend) (protocols.BroadcastSent, error) {
	f.called("broadcast")
	return protocols.BroadcastSent{Recipients: []string{"reviewer", "tester"}}, nil
}

func (f *fakeTask) deliver(n Notice) {
	f.mu.Lock()
	f.notices = append(f.notices, n)
	f.mu.Unlock()
	select {
	case f.arrived <- struct{}{}:
	default:
	}
}

func (f *fakeTask) Inbox(ctx context.Context, wait time.Duration) ([]Notice, error) {
	f.called("inbox")
	take := func() []Notice {
		f.mu.Lock()
		defer f.mu.Unlock()
		n := f.notices
		f.notices = nil
		return n
	}
	if n := take(); len(n) > 0 || wait <= 0 {
		return n, nil
	}
	if f.release != nil {
		<-f.release
		return take(), nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-f.arrived:
	case <-t.C:
	case <-ctx.Done():
	}
	return take(), nil
}

func (f *fakeTask) Handoff(_ context.Context, req protocols.TaskHandoff) (protocols.HandoffResult, error) {
	f.called("handoff")
	f.mu.Lock()
	f.handoffs = append(f.handoffs, req)
	f.mu.Unlock()
	if req.ToAgent == f.agent {
		return protocols.HandoffResult{TaskID: req.TaskID, Status: "refused", Reason: "a cycle: " + f.agent + " -> " + f.agent}, nil
	}
	return protocols.HandoffResult{TaskID: req.TaskID, Status: "completed", Outputs: req.HandoffContext}, nil
}

func (f *fakeTask) Spawn(_ context.Context, req protocols.TaskSpawn) (protocols.SpawnAccepted, error) {
	f.called("spawn")
	f.mu.Lock()
	f.spawned++
	id := fmt.Sprintf("%s/%d", f.agent, f.spawned)
	f.mu.Unlock()
	f.deliver(Notice{Type: protocols.TypeTaskAnnounce, Body: protocols.TaskAnnounce{TaskID: id, Agent: req.Agent, Status: "completed"}})
	return protocols.SpawnAccepted{TaskID: id}, nil
}

func (f *fakeTask) ListAgents(context.Context) (protocols.AgentsListed, error) {
	f.called("list_agents")
	return protocols.AgentsListed{Agents: []protocols.ListedAgent{{ID: f.agent, TaskID: "build", CueID: "build", State: "working"}}}, nil
}

func (f *fakeTask) ReportStatus(_ context.Context, req protocols.StatusReport) error {
	f.called("report_status")
	f.mu.Lock()
	f.status = append(f.status, req)
	f.mu.Unlock()
	return nil
}

func (f *fakeTask) MemorySearch(_ context.Context, req protocols.MemorySearch) (protocols.MemoryResults, error) {
	f.called("memory_search")
	f.mu.Lock()
	defer f.mu.Unlock()
	var items []map[string]any
	for k := range f.memory {
		if strings.Contains(k, req.Query) {
			items = append(items, map[string]any{"key": k})
		}
	}
	return protocols.MemoryResults{Items: items}, nil
}

func (f *fakeTask) MemoryWrite(_ context.Context, req protocols.MemoryWrite) (MemoryWritten, error) {
	f.called("memory_write")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.memory[req.Key]++
	return MemoryWritten{Key: req.Key, Version: f.memory[req.Key]}, nil
}

func (f *fakeTask) Escalate(_ context.Context, e Escalation) error {
	f.called("escalate")
	f.mu.Lock()
	f.escal = append(f.escal, e)
	f.mu.Unlock()
	return nil
}

func (f *fakeTask) refusals() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.refused...)
}

func (f *fakeTask) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}
