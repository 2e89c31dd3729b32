//go:build unix

// Package fakeacp is a scripted Agent Client Protocol agent (JSON-RPC 2.0 on
// stdio) for orch's own tests and examples, standard library only: it
// behaves well or misbehaves in one named way.
//
//	fake-acp MODE [ARG]
//
// Modes: ok (a happy turn: its reply echoes the prompt's first line and ends
// with {"summary": ...}), permission KIND (asks permission for a tool of
// that kind, then reports the outcome), stop REASON (ends the turn with
// that stop reason), hang (never ends a turn unless cancelled), hang-hard
// (ignores session/cancel too), silent (never answers initialize), flood N
// (N message lines), crash (exits 3 in the turn), escape (leaves a setsid
// grandchild, sleep 300, whose pid it writes to ARG), garbage (a line that is
// not JSON), unknown-method (calls terminal/create), stray-response (answers
// a request never made), huge-line (a line over 10 MiB), fs FILE (writes
// FILE in its cwd, reads it back, tries to read /etc/hostname and FILE.missing:
// it reports the outcomes).
package fakeacp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

type agent struct {
	mode, arg string
	wmu       sync.Mutex
	mu        sync.Mutex
	next      int
	waiting   map[string]chan msg
	cancels   map[string]chan struct{}
	sessions  int
	cwd       map[string]string
}

// Main runs the fake agent; it returns its exit status.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: fake-acp MODE [ARG]")
		return 2
	}
	a := &agent{mode: args[0], waiting: map[string]chan msg{}, cancels: map[string]chan struct{}{}, cwd: map[string]string{}}
	if len(args) > 1 {
		a.arg = args[1]
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m msg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			fmt.Fprintln(os.Stderr, "fake-acp: bad line")
			return 1
		}
		a.handle(m)
	}
	return 0
}

func (a *agent) send(m map[string]any) {
	m["jsonrpc"] = "2.0"
	b, _ := json.Marshal(m)
	a.wmu.Lock()
	os.Stdout.Write(append(b, '\n'))
	a.wmu.Unlock()
}

func (a *agent) raw(line string) {
	a.wmu.Lock()
	os.Stdout.WriteString(line + "\n")
	a.wmu.Unlock()
}

func (a *agent) handle(m msg) {
	if m.Method == "" { // a response to one of our calls
		a.mu.Lock()
		ch := a.waiting[string(m.ID)]
		a.mu.Unlock()
		if ch != nil {
			ch <- m
		}
		return
	}
	var p struct {
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
		Prompt    []struct {
			Text string `json:"text"`
		} `json:"prompt"`
	}
	_ = json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "initialize":
		if a.mode == "silent" {
			return
		}
		a.send(map[string]any{"id": m.ID, "result": map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}}})
	case "session/new":
		a.mu.Lock()
		a.sessions++
		id := fmt.Sprintf("s%d", a.sessions)
		a.cwd[id] = p.Cwd
		a.cancels[id] = make(chan struct{}, 1)
		a.mu.Unlock()
		a.send(map[string]any{"id": m.ID, "result": map[string]any{"sessionId": id}})
	case "session/prompt":
		text := ""
		if len(p.Prompt) > 0 {
			text = p.Prompt[0].Text
		}
		go a.turn(m.ID, p.SessionID, text)
	case "session/cancel":
		a.mu.Lock()
		ch := a.cancels[p.SessionID]
		a.mu.Unlock()
		if ch != nil {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

func (a *agent) say(session, text string) {
	a.send(map[string]any{"method": "session/update", "params": map[string]any{"sessionId": session,
		"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}}}})
}

func (a *agent) call(method string, params any) msg {
	a.mu.Lock()
	a.next++
	id := strconv.Itoa(1000 + a.next)
	ch := make(chan msg, 1)
	a.waiting[id] = ch
	a.mu.Unlock()
	a.send(map[string]any{"id": json.RawMessage(id), "method": method, "params": params})
	return <-ch
}

func (a *agent) end(id json.RawMessage, reason string) {
	a.send(map[string]any{"id": id, "result": map[string]any{"stopReason": reason}})
}

func (a *agent) turn(id json.RawMessage, session, prompt string) {
	a.mu.Lock()
	cancel, cwd := a.cancels[session], a.cwd[session]
	a.mu.Unlock()
	first, _, _ := strings.Cut(prompt, "\n")
	switch a.mode {
	case "ok":
		a.send(map[string]any{"method": "session/update", "params": map[string]any{"sessionId": session,
			"update": map[string]any{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read the code", "kind": "read", "status": "pending"}}})
		a.send(map[string]any{"method": "session/update", "params": map[string]any{"sessionId": session,
			"update": map[string]any{"sessionUpdate": "plan", "entries": []any{map[string]any{"content": "do it"}}}}})
		a.say(session, "Working on: "+first+"\n")
		a.say(session, "Done.\n```json\n{\"summary\": \"did ")
		a.say(session, "it\"}\n```")
		// the session usage RFD's reports: the session's cost, the turn's tokens
		a.send(map[string]any{"method": "session/update", "params": map[string]any{"sessionId": session,
			"update": map[string]any{"sessionUpdate": "usage_update", "used": 1200, "size": 200000,
				"cost": map[string]any{"amount": 0.02, "currency": "USD"}}}})
		a.send(map[string]any{"id": id, "result": map[string]any{"stopReason": "end_turn",
			"usage": map[string]any{"inputTokens": 1000, "outputTokens": 200, "totalTokens": 1200}}})
	case "permission":
		r := a.call("session/request_permission", map[string]any{"sessionId": session,
			"toolCall": map[string]any{"toolCallId": "t1", "title": "Run the tests", "kind": a.arg},
			"options": []any{
				map[string]any{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
				map[string]any{"optionId": "yes-always", "name": "Always allow", "kind": "allow_always"},
				map[string]any{"optionId": "no", "name": "Reject", "kind": "reject_once"},
			}})
		var res struct {
			Outcome struct {
				Outcome  string `json:"outcome"`
				OptionID string `json:"optionId"`
			} `json:"outcome"`
		}
		_ = json.Unmarshal(r.Result, &res)
		a.say(session, fmt.Sprintf("permission: %s %s\n{\"summary\": \"asked\"}", res.Outcome.Outcome, res.Outcome.OptionID))
		a.end(id, "end_turn")
	case "stop":
		a.say(session, "stopping\n")
		a.end(id, a.arg)
	case "hang":
		a.say(session, "hanging\n")
		<-cancel
		a.end(id, "cancelled")
	case "hang-hard":
		a.say(session, "hanging hard\n")
		select {}
	case "flood":
		n, _ := strconv.Atoi(a.arg)
		for i := 0; i < n; i++ {
			a.say(session, fmt.Sprintf("line %d\n", i))
		}
		a.say(session, `{"summary": "flooded"}`)
		a.end(id, "end_turn")
	case "crash":
		a.say(session, "crashing\n")
		os.Exit(3)
	case "escape":
		cmd := exec.Command("sleep", "300")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if cmd.Start() == nil && a.arg != "" {
			os.WriteFile(a.arg, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
		}
		a.say(session, `escaped {"summary": "escaped"}`)
		a.end(id, "end_turn")
	case "garbage":
		a.raw("this is not JSON-RPC")
	case "unknown-method":
		a.call("terminal/create", map[string]any{"sessionId": session, "command": "ls"})
	case "stray-response":
		a.send(map[string]any{"id": 999, "result": map[string]any{}})
	case "huge-line":
		a.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"pad":"` + strings.Repeat("x", 11<<20) + `"}}`)
	case "fs":
		path := filepath.Join(cwd, a.arg)
		w := a.call("fs/write_text_file", map[string]any{"sessionId": session, "path": path, "content": "written by fake-acp\n"})
		r := a.call("fs/read_text_file", map[string]any{"sessionId": session, "path": path})
		o := a.call("fs/read_text_file", map[string]any{"sessionId": session, "path": "/etc/hostname"})
		n := a.call("fs/read_text_file", map[string]any{"sessionId": session, "path": path + ".missing"})
		a.say(session, fmt.Sprintf("write: %s %s\nread: %s\noutside: %s\nmissing: %s\n{\"summary\": \"fs\"}", w.Result, w.Error, r.Result, o.Error, n.Error))
		a.end(id, "end_turn")
	default:
		a.say(session, "unknown mode "+a.mode)
		a.end(id, "refusal")
	}
}
