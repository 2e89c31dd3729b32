// Package fakecodex is a fake `codex` executable for orch's tests and
// examples, standard library only: it reads the prompt on stdin and
// replays the events of codex exec --json (thread.started, turn.started,
// item.started/item.completed, turn.completed or turn.failed).
//
//	codex [MODE] exec [codex's flags...] -
//
// MODE (else $FAKE_CODEX, else ok): ok (the reply echoes the prompt's
// first line and ends with {"summary": ...}; 1200 input and 340 output
// tokens), error (an error event, then turn.failed), malformed (line 2 is
// not JSON, then it hangs), hang (never ends), crash (exits 3 with no
// turn.completed). It writes its argv to stderr, so tests see the flags
// it got.
package fakecodex

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Main runs the fake; it returns its exit status.
func Main(args []string) int {
	mode := os.Getenv("FAKE_CODEX")
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "exec" {
		mode, args = args[0], args[1:]
	}
	if mode == "" {
		mode = "ok"
	}
	fmt.Fprintf(os.Stderr, "argv: codex %s\n", strings.Join(args, " "))
	if len(args) == 0 || args[0] != "exec" {
		fmt.Fprintln(os.Stderr, "fake codex: only exec is faked")
		return 2
	}
	prompt, _ := io.ReadAll(os.Stdin)
	first, _, _ := strings.Cut(string(prompt), "\n")
	w := bufio.NewWriter(os.Stdout)
	emit := func(m map[string]any) {
		b, _ := json.Marshal(m)
		w.Write(append(b, '\n'))
		w.Flush()
	}
	emit(map[string]any{"type": "thread.started", "thread_id": "0199a213-fake-codex-thread"})
	switch mode {
	case "malformed":
		fmt.Fprintln(w, "this is not json")
		w.Flush()
		time.Sleep(time.Hour)
		return 0
	case "hang":
		time.Sleep(time.Hour)
		return 0
	case "crash":
		fmt.Fprintln(os.Stderr, "fake codex: crashing")
		return 3
	}
	emit(map[string]any{"type": "turn.started"})
	emit(map[string]any{"type": "item.started", "item": map[string]any{"id": "item_0", "type": "command_execution",
		"command": "bash -lc ls", "aggregated_output": "", "exit_code": nil, "status": "in_progress"}})
	emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "command_execution",
		"command": "bash -lc ls", "aggregated_output": "README.md\n", "exit_code": 0, "status": "completed"}})
	if mode == "error" {
		emit(map[string]any{"type": "error", "message": "stream disconnected before completion"})
		emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": "stream disconnected before completion"}})
		return 1
	}
	reply := "Working on: " + first + "\nDone.\n{\"summary\": \"did it\"}"
	emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_1", "type": "agent_message", "text": reply}})
	emit(map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 340}})
	return 0
}
