//go:build unix

// Package fakeacp is a scripted Agent Client Protocol agent (JSON-RPC 2.0 on
// stdio) for orch's own tests and examples, standard library only: it
// behaves well or misbehaves in one named way. Like the real adapters
// (claude-code-acp, codex-acp), it does not exit when its stdin closes: it
// waits to be stopped.
//
//	fake-acp MODE [ARG...]
//
// Modes: ok (a happy turn as claude-code-acp sends it: a tool call whose
// content is an array, its update, a plan, the reply, which echoes the
// prompt's first line and ends with {"summary": ...}, the session's cost in
// a usage_update and the turn's tokens in the prompt response), updates
// (every session update and content kind of the ACP schema, then a reply),
// permission KIND [codex] (a tool call of that kind, then a permission
// request for it without the kind, as claude-code-acp asks; with codex the
// options are codex-acp's "Yes, proceed" and "No"; it reports the outcome),
// ask-flood N (N permission requests at once), big MIB (a reply of MIB MiB,
// in lines of 100 bytes, sent in 64 KiB chunks), stop REASON (ends the turn
// with that stop reason), hang (never ends a turn unless cancelled; the
// cancelled turn reports its usage), hang-hard (ignores session/cancel too),
// silent (never answers initialize), flood N (N message lines), crash
// (exits 3 in the turn), escape (leaves a setsid grandchild, sleep 300,
// whose pid it writes to ARG), garbage (a line that is not JSON),
// unknown-method (calls terminal/create), stray-response (answers a request
// never made), huge-line (a line over 10 MiB), fs FILE (writes FILE in its
// cwd, reads it back, tries to read /etc/hostname and FILE.missing: it
// reports the outcomes), mcp CALL... (calls the tools of session/new's
// server named orch, each CALL "TOOL {JSON arguments}", over HTTP or by
// starting its stdio command, and reports each result in its reply; with
// FAKE_ACP_MCP_HTTP set, initialize advertises mcpCapabilities.http). With
// FAKE_ACP_PIDFILE set, it writes its pid there.
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
	"time"
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
	args      []string
	wmu       sync.Mutex
	mu        sync.Mutex
	next      int
	waiting   map[string]chan msg
	cancels   map[string]chan struct{}
	sessions  int
	cwd       map[string]string
	mcp       map[string][]MCPServer // session/new's mcpServers, by session
}

// Main runs the fake agent; it returns its exit status.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: fake-acp MODE [ARG]")
		return 2
	}
	if path := os.Getenv("FAKE_ACP_PIDFILE"); path != "" {
		_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	a := &agent{mode: args[0], waiting: map[string]chan msg{}, cancels: map[string]chan struct{}{}, cwd: map[string]string{}, mcp: map[string][]MCPServer{}}
	if len(args) > 1 {
		a.arg, a.args = args[1], args[1:]
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
	// stdin closed: like claude-code-acp and codex-acp, go on until stopped
	time.Sleep(time.Hour)
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
		SessionID  string      `json:"sessionId"`
		Cwd        string      `json:"cwd"`
		MCPServers []MCPServer `json:"mcpServers"`
		Prompt     []struct {
			Text string `json:"text"`
		} `json:"prompt"`
	}
	_ = json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "initialize":
		if a.mode == "silent" {
			return
		}
		caps := map[string]any{}
		if os.Getenv("FAKE_ACP_MCP_HTTP") != "" {
			caps["mcpCapabilities"] = map[string]any{"http": true}
		}
		a.send(map[string]any{"id": m.ID, "result": map[string]any{"protocolVersion": 1, "agentCapabilities": caps}})
	case "session/new":
		a.mu.Lock()
		a.sessions++
		id := fmt.Sprintf("s%d", a.sessions)
		a.cwd[id] = p.Cwd
		a.mcp[id] = p.MCPServers
		a.cancels[id] = make(chan struct{}, 1)
		a.mu.Unlock()
		a.send(map[string]any{"id": m.ID, "result": map[string]any{"sessionId": id}})
		// as claude-code-acp does, right after the session is made
		a.update(id, map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{
			map[string]any{"name": "review", "description": "Review the changes"}}})
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
	a.update(session, map[string]any{"sessionUpdate": "agent_message_chunk", "content": text0(text)})
}

// update sends one session/update notification.
func (a *agent) update(session string, u map[string]any) {
	a.send(map[string]any{"method": "session/update", "params": map[string]any{"sessionId": session, "update": u}})
}

// text0 is a text content block.
func text0(text string) map[string]any { return map[string]any{"type": "text", "text": text} }

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
		a.okTurn(id, session, first, cwd)
	case "updates":
		a.everyUpdate(session, cwd)
		a.say(session, `every update sent {"summary": "updates"}`)
		a.end(id, "end_turn")
	case "permission":
		outcome := a.permission(session, "t1", "Write notes.txt", a.arg, len(a.args) > 1 && a.args[1] == "codex")
		a.say(session, fmt.Sprintf("permission: %s\n{\"summary\": \"asked\"}", outcome))
		a.end(id, "end_turn")
	case "ask-flood":
		n, _ := strconv.Atoi(a.arg)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.permission(session, fmt.Sprintf("t%d", i), fmt.Sprintf("Run step %d", i), "execute", false)
			}()
		}
		wg.Wait()
		a.say(session, `asked {"summary": "flooded"}`)
		a.end(id, "end_turn")
	case "big":
		a.bigReply(session, a.arg)
		a.end(id, "end_turn")
	case "mcp":
		a.say(session, a.mcpTurn(session)+`{"summary": "mcp"}`)
		a.end(id, "end_turn")
	case "stop":
		a.say(session, "stopping\n")
		a.end(id, a.arg)
	case "hang":
		a.say(session, "hanging\n")
		a.usage(session, 0.004321)
		<-cancel
		a.send(map[string]any{"id": id, "result": map[string]any{"stopReason": "cancelled",
			"usage": map[string]any{"inputTokens": 700, "outputTokens": 70, "totalTokens": 770}}})
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
