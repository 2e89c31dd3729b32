// Package fakeclaude is a fake `claude` executable for orch's tests and
// examples, standard library only: it reads the prompt on stdin and
// replays Claude Code's --output-format stream-json messages (system init,
// assistant text and tool_use, user tool_result, result).
//
//	claude [MODE] [claude's flags...]
//
// MODE (else $FAKE_CLAUDE, else ok): ok (the reply echoes the prompt's
// first line and ends with {"summary": ...}; the result costs $0.0123),
// error (a result with subtype error_max_turns), malformed (line 2 is not
// JSON, then it hangs), hang (never ends), crash (exits 3 with no result).
// It writes its argv to stderr, so tests see the flags it got.
package fakeclaude

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
	mode := os.Getenv("FAKE_CLAUDE")
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		mode, args = args[0], args[1:]
	}
	if mode == "" {
		mode = "ok"
	}
	fmt.Fprintf(os.Stderr, "argv: claude %s\n", strings.Join(args, " "))
	prompt, _ := io.ReadAll(os.Stdin)
	first, _, _ := strings.Cut(string(prompt), "\n")
	w := bufio.NewWriter(os.Stdout)
	emit := func(m map[string]any) {
		b, _ := json.Marshal(m)
		w.Write(append(b, '\n'))
		w.Flush()
	}
	const session = "5f1c2a9e-fake-claude-session"
	emit(map[string]any{"type": "system", "subtype": "init", "session_id": session, "model": "claude-fake", "tools": []string{"Read", "Bash"}})
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
		fmt.Fprintln(os.Stderr, "fake claude: crashing")
		return 3
	}
	emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "ls -la"}}}}})
	emit(map[string]any{"type": "user", "session_id": session, "message": map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "README.md"}}}})
	usage := map[string]any{"input_tokens": 1200, "output_tokens": 340, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if mode == "error" {
		emit(map[string]any{"type": "result", "subtype": "error_max_turns", "is_error": true, "num_turns": 3,
			"session_id": session, "total_cost_usd": 0.5, "usage": usage})
		return 1
	}
	reply := "Working on: " + first + "\nDone.\n{\"summary\": \"did it\"}"
	emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "text", "text": reply}}}})
	emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "num_turns": 2, "result": reply,
		"session_id": session, "total_cost_usd": 0.0123, "usage": usage})
	return 0
}
