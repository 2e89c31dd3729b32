package driver

import (
	"fmt"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// Attempt is what a driver sees of one attempt of an agent at a cue. The
// engine fills it before WARNING; the driver reads it, and sets Msgs.Reply.
type Attempt struct {
	RunID  string
	Cue    *planner.Cue // its cue (a child task's or a resolver's own: ID, Prompt, Agents)
	Agent  *spec.Agent
	Number int
	Token  string // names the processes it starts (ORCH_ATTEMPT_TOKEN), for the sweeps
	// Dir is where its processes start: its agent's workdir, in its
	// worktree when it has one (a protocol agent's process, which serves
	// several attempts, starts in attempt.Workdir).
	Dir      string
	OutDir   string           // where its ORCH_OUTPUT and input files go
	Cgroup   *proc.RunCgroup  // the run's cgroup, nil: none
	Timeouts attempt.Timeouts // its phases', and the kill grace
	Host     Host             // the engine's services to it
	Agents   *Agents          // the run's agent processes (jsonl, acp); nil: none
	// Halt is closed when the attempt is told to stop (Host.Stopped says
	// why), Abort when another goroutine ended it (Host.Failure), Ended when
	// its phases are over.
	Halt, Abort, Ended <-chan struct{}
	Msgs               Messages
	// MCP is how its agent reaches orch's MCP tools, acting as it, and its
	// own MCP servers (nil: it gets none).
	MCP *mcpbridge.Attachment
}

// Messages are a speaking agent's messages of the phases that the engine
// recorded with the decisions that send them (nil: the driver records its
// own: a child task's coord.go), and the agent's answer to the phase just
// done, which the engine records with what it decides next.
type Messages struct {
	Warning, Standby, Go *Wire
	Reply                *Wire
}

// TakeReply hands the agent's last answer to the engine, to record.
func (m *Messages) TakeReply() *Wire {
	r := m.Reply
	m.Reply = nil
	return r
}

// Host is what an engine gives a driver for one attempt. Its methods are
// called on the attempt's goroutine unless said otherwise.
type Host interface {
	// Env is the environment of the attempt's processes, extra last.
	Env(extra ...string) []string
	// Log logs one line of the agent's output (stream stdout or stderr),
	// within the attempt's budget; any goroutine. CloseLog logs what the
	// budget held back (the agent's process outlived the attempt).
	Log(stream, text string)
	CloseLog()
	// Note records something worth seeing about the attempt; any goroutine.
	Note(format string, args ...any)
	// Usage counts what the agent reported it used so far (its totals).
	// One call at a time.
	Usage(u record.Usage)
	// Board fills a task's blackboard snapshot as the board is at GO.
	Board(t *attempt.Task) *attempt.Task
	// AskPerson asks the person for an agent that cannot ask itself (an ACP
	// permission request); deliver gets the answer, one of options when
	// there are some (record.PickOption).
	AskPerson(q protocols.QuestionAsk, options []record.QuestionOption, deliver func(answer string)) *attempt.Failure
	// Record records a message of the attempt's agent now: "in" from it,
	// "out" to it. A failure ends the attempt (the message is not acted on).
	Record(dir string, m *Wire) *attempt.Failure
	// Serve serves one of the agent's requests during the attempt (the
	// hub), replying through p. more takes the next request queued behind
	// it, without waiting (nil: none), for the hub to serve with it (a
	// burst of blackboard writes in one transaction). A failure ends the
	// attempt.
	Serve(p Peer, req *Wire, more func() *Wire) *attempt.Failure
	// Started keeps a process the attempt started: its output is read to
	// the end before the attempt ends.
	Started(p *proc.Process)
	// Going says the attempt is in GO: from now on it may be sent messages
	// and questions, through p (nil: its agent takes none).
	Going(p Peer)
	// Stopped is the attempt's failure once Halt is closed; Failure the
	// one another goroutine ended it with, once Abort is closed.
	Stopped() *attempt.Failure
	Failure() *attempt.Failure
}

// Peer is an attempt's agent as the hub reaches it: a jsonl agent's
// process. Send records a message to it (as the attempt's) and writes it;
// Write writes one recorded already. Expect registers what to do with the
// agent's answer to the message id (it must not block); Unexpect forgets
// it.
type Peer interface {
	Send(msg protocols.Message) *attempt.Failure
	Write(msg protocols.Message) *attempt.Failure
	Expect(id string, answer func(*Wire)) *attempt.Failure
	Unexpect(id string)
}

// Wire is a protocol message with its encoded line.
type Wire struct {
	Msg protocols.Message
	Raw []byte
}

// Encode encodes a message orch sends.
func Encode(msg protocols.Message) *Wire {
	raw, err := protocols.Encode(msg)
	if err != nil {
		panic(fmt.Sprintf("driver: cannot encode %s: %v", msg.Type, err)) // orch's own messages always encode
	}
	return &Wire{Msg: msg, Raw: raw}
}

// halted reports whether the attempt has been told to stop.
func halted(a *Attempt) bool {
	select {
	case <-a.Halt:
		return true
	default:
		return false
	}
}
