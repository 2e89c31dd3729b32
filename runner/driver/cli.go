package driver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/spec"
)

// cliProtocol is a headless coding CLI run once per attempt at GO (claude
// -p, codex exec): the prompt on its stdin, a JSON event stream, one object
// a line, on its stdout.
type cliProtocol struct {
	name string   // how its stream is named in messages
	args []string // after the executable: headless, JSON events, prompt on stdin
	// mcpArgs are the flags that give the CLI orch's MCP server and the
	// agent's own (mcpbridge.Attachment).
	mcpArgs func(*mcpbridge.Attachment) ([]string, error)
	tail    []string // last, after the permission flags
	// event reads one line of the stream (a JSON object), logging what it
	// says and keeping what the attempt ends with; an error is a malfunction.
	event func(s *cliStream, line []byte) error
}

func registerCLI(protocol string, p *cliProtocol) {
	Register(protocol, Kind{New: func() Driver { return &cliDriver{p: p} }, Trivial: noPhases})
}

// cliDriver is a plain agent's driver (prepare at WARNING, ready_check at
// STANDBY: the CLI is one-shot) whose GO runs the CLI and reads its stream.
type cliDriver struct {
	plainDriver
	p *cliProtocol
}

// cliArgv is the command line: command (or the protocol's executable),
// the protocol's flags, then the flags the agent's permissions map onto.
// Agents' own extra flags go in command, after the executable.
func cliArgv(agent *spec.Agent, p *cliProtocol, mcp []string) []string {
	argv := append([]string(nil), agent.Command...)
	if len(argv) == 0 {
		argv = []string{spec.CLIProtocols[agent.Protocol]}
	}
	argv = append(argv, p.args...)
	perms, _ := spec.CLIPermissionArgs(agent)
	return append(joinFlag(append(append(argv, perms...), mcp...), "--allowedTools"), p.tail...)
}

// joinFlag makes the values of a flag given twice (the permissions' tools,
// the MCP servers') one comma-separated value, as the CLI reads it.
func joinFlag(argv []string, flag string) []string {
	out, at := argv[:0:0], -1
	for i := 0; i < len(argv); i++ {
		if argv[i] == flag && i+1 < len(argv) {
			if at >= 0 {
				out[at] += "," + argv[i+1]
			} else {
				out, at = append(out, flag, argv[i+1]), len(out)+1
			}
			i++
			continue
		}
		out = append(out, argv[i])
	}
	return out
}

func (d *cliDriver) Work(a *Attempt, t *attempt.Task) (map[string]any, *attempt.Failure) {
	prompt, err := attempt.RenderPrompt(a.Agent, a.Cue.Prompt, a.Host.Board(t))
	if err != nil {
		return nil, attempt.Failf("prompt", "rendering the prompt: %v", err)
	}
	s := d.goIO
	d.goIO = nil
	if s == nil {
		if s, err = proc.NewStdio(true); err != nil {
			return nil, attempt.Failf("start", "command: %v", err)
		}
	}
	var mcp []string
	if a.MCP != nil && d.p.mcpArgs != nil {
		if mcp, err = d.p.mcpArgs(a.MCP); err != nil {
			return nil, attempt.Failf("start", "%v", err)
		}
	}
	argv := cliArgv(a.Agent, d.p, mcp)
	p, err := proc.Start(proc.Spec{Argv: argv, Dir: a.Dir, Env: a.Host.Env(), Token: a.Token, Stdio: s, Cgroup: a.Cgroup, Grace: a.Timeouts.Grace})
	if err != nil {
		return nil, attempt.Failf("start", "command: %v", err)
	}
	d.goProc = p
	st := &cliStream{a: a, p: d.p, broken: make(chan struct{})}
	p.ReadOutput(st.read, logLines(logWriter(a, "stderr")))
	a.Host.Started(p)
	go func() {
		_, _ = io.WriteString(p.Stdin(), prompt) // a CLI that exits early gets EPIPE: fine
		_ = p.Stdin().Close()
	}()
	timer := time.NewTimer(a.Timeouts.Go)
	defer timer.Stop()
	var f *attempt.Failure
	select {
	case <-p.Done():
	case <-st.broken:
		f = st.malfunction()
		p.Terminate(a.Timeouts.Grace)
	case <-timer.C:
		f = attempt.Failf("timeout", "%s did not finish within %s", argv[0], a.Timeouts.Go)
		p.Terminate(a.Timeouts.Grace)
	case <-a.Halt:
		f = a.Host.Stopped()
		p.Terminate(a.Timeouts.Grace)
	}
	<-p.Done()
	Sweep(a, p, "command", f != nil)
	if f != nil {
		return nil, f
	}
	p.WaitOutput() // the stream is read to its end: its result is known
	return st.end(p.Exit())
}

// cliStream is what one run of a CLI said on its stream.
type cliStream struct {
	a      *Attempt
	p      *cliProtocol
	broken chan struct{} // closed on a malformed line

	mu      sync.Mutex
	bad     *attempt.Failure
	ended   bool             // the stream's final event came (claude's result, codex's turn.completed)
	text    string           // the final reply
	failed  *attempt.Failure // the error the stream ended with
	session string
}

// read parses the stream line by line. A line that is not a JSON object,
// or one its protocol cannot read, breaks the attempt, naming the line.
func (s *cliStream) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br, acpMaxLine)
		if errors.Is(err, errLineTooLong) {
			s.broke(attempt.Failf("malfunction", "line %d of the %s stream is longer than %d bytes", n, s.p.name, acpMaxLine))
			break
		}
		if err != nil {
			return
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' || !json.Valid(line) {
			s.a.Host.Log("stdout", string(line))
			s.broke(attempt.Failf("malfunction", "line %d of the %s stream is not a JSON object: %s", n, s.p.name, attempt.Truncate(string(line), 80)))
			break
		}
		if err := s.p.event(s, line); err != nil {
			s.a.Host.Log("stdout", attempt.Truncate(string(line), 200))
			s.broke(attempt.Failf("malfunction", "line %d of the %s stream: %v", n, s.p.name, err))
			break
		}
	}
	_, _ = io.Copy(io.Discard, r) // the process is being stopped; let it write
}

func (s *cliStream) broke(f *attempt.Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bad == nil {
		s.bad = f
		close(s.broken)
	}
}

func (s *cliStream) malfunction() *attempt.Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bad
}

// end is how the attempt ends once the CLI exited and its stream is read:
// a malformed line, then the error its stream reported, then its exit
// status; a stream that never reached its final event is a malfunction.
func (s *cliStream) end(e proc.ExitInfo) (map[string]any, *attempt.Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.bad != nil:
		return nil, s.bad
	case s.failed != nil:
		return nil, s.failed
	case e.Signaled:
		return nil, attempt.Failf("signal", "command was %s", e)
	case e.Code != 0:
		return nil, attempt.Failf(fmt.Sprintf("exit:%d", e.Code), "command %s", e)
	case !s.ended:
		return nil, attempt.Failf("malfunction", "the %s stream ended without its final event (the CLI exited 0)", s.p.name)
	}
	return attempt.ReplyOutputs(s.a.Agent, s.text), nil
}

// setSession records the CLI's session id once, as a note on the attempt
// (claude --resume and codex exec resume take it).
func (s *cliStream) setSession(id string) {
	s.mu.Lock()
	first := s.session == "" && id != ""
	if first {
		s.session = id
	}
	s.mu.Unlock()
	if first {
		s.a.Host.Note("%s session %s", s.p.name, id)
	}
}

func (s *cliStream) finish(text string, f *attempt.Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	s.text = text
	if f != nil && s.failed == nil {
		s.failed = f
	}
}

func (s *cliStream) fail(f *attempt.Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = f
	}
}

// logText logs a reply's text line by line.
func (s *cliStream) logText(text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		s.a.Host.Log("stdout", l)
	}
}
