package driver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/record"
)

// How an ACP agent's session/update notifications become its output (orch
// logs, --stream), after the ACP schema (agentclientprotocol/agent-client-
// protocol, schema/v1: the stable kinds and the unstable ones): message
// text as it is, line by line; everything else as short lines, the content
// of a tool call indented below it. Fields are read one by one, leniently
// (as the schema's x-deserialize-default-on-error asks): a field of the
// wrong type is left out, never the whole update.

// acpToolCall is what a session knows of one tool call, from its tool_call
// and tool_call_update notifications: a permission request names the tool
// call by id and may leave the rest out (claude-code-acp sends no kind).
type acpToolCall struct {
	title, kind, status string
}

const (
	acpMaxToolCalls   = 10000 // tool calls remembered per session (a finished one is forgotten)
	acpMaxContentRows = 20    // lines of a text content block logged below its tool call
)

// update logs one session/update; it runs on the connection's reader.
func (s *acpSession) update(params json.RawMessage) {
	u := acpObject(params).object("update")
	kind := u.str("sessionUpdate")
	switch kind {
	case "": // not an update: nothing to show
		return
	case "agent_message_chunk":
		s.messageChunk(u)
		return
	case "agent_thought_chunk":
		s.streamChunk(s.thought, "thinking: ", u)
		return
	case "user_message_chunk":
		s.streamChunk(s.user, "user: ", u)
		return
	}
	s.flush() // what streamed so far comes before this update's lines
	var lines []string
	switch kind {
	case "tool_call", "tool_call_update":
		lines = s.toolCall(u)
	case "plan":
		lines = planLines("plan", u.list("entries"))
	case "plan_update":
		plan := u.object("plan")
		id := plan.str("planId")
		switch plan.str("type") {
		case "items":
			lines = planLines("plan "+id, plan.list("entries"))
		case "markdown":
			lines = append([]string{"plan " + id + ":"}, indented(plan.str("content"))...)
		case "file":
			lines = []string{"plan " + id + ": " + plan.str("uri")}
		default:
			lines = []string{"plan " + id + " updated"}
		}
	case "plan_removed":
		lines = []string{"plan removed: " + u.str("planId")}
	case "available_commands_update":
		var names []string
		for _, c := range u.list("availableCommands") {
			names = append(names, acpObject(c).str("name"))
		}
		lines = []string{"commands: " + oneLine(strings.Join(names, ", "))}
	case "current_mode_update":
		lines = []string{"mode: " + u.str("currentModeId")}
	case "config_option_update":
		var opts []string
		for _, o := range u.list("configOptions") {
			f := acpObject(o)
			value, ok := f.text("currentValue") // a select's value id, or a boolean
			if !ok {
				value = string(f["currentValue"])
			}
			opts = append(opts, f.str("name")+" = "+value)
		}
		lines = []string{"config: " + oneLine(strings.Join(opts, ", "))}
	case "session_info_update":
		if t, ok := u.text("title"); ok {
			lines = []string{"session: " + oneLine(t)}
		}
	case "usage_update":
		lines = []string{s.usageUpdate(u)}
	case "notice":
		line := fmt.Sprintf("notice (%s): %s", u.str("severity"), oneLine(u.str("title")))
		if d := u.str("description"); d != "" {
			line += ": " + oneLine(d)
		}
		lines = []string{line}
	case "compaction_update":
		line := fmt.Sprintf("compaction %s: %s", u.str("compactionId"), u.str("status"))
		if e := u.str("error"); e != "" {
			line += ": " + oneLine(e)
		}
		lines = []string{line}
	case "compaction_summary_chunk":
		lines = []string{fmt.Sprintf("compaction %s summary: %s", u.str("compactionId"), contentLine(u.object("content")))}
	default:
		lines = []string{"update: " + oneLine(kind)}
	}
	for _, l := range lines {
		s.a.Host.Log("stdout", l)
	}
}

// messageChunk takes a piece of the agent's reply: its text is the reply
// (output text, the log line by line); other content a line of its own.
func (s *acpSession) messageChunk(u acpFields) {
	c := u.object("content")
	if c.str("type") != "text" {
		s.flush()
		s.a.Host.Log("stdout", contentLine(c))
		return
	}
	text := c.str("text")
	s.flushOthers(s.message)
	s.mu.Lock()
	s.reply.WriteString(text)
	s.mu.Unlock()
	_, _ = s.message.Write([]byte(text))
}

// streamChunk takes a piece of a streamed thought or user message: logged
// line by line, each line with its prefix.
func (s *acpSession) streamChunk(w *lineWriter, prefix string, u acpFields) {
	c := u.object("content")
	s.flushOthers(w)
	if c.str("type") != "text" {
		w.flush()
		s.a.Host.Log("stdout", prefix+contentLine(c))
		return
	}
	_, _ = w.Write([]byte(c.str("text")))
}

// flushOthers ends the lines streamed so far by the writers other than w:
// a reply's line started before a thought is logged before it.
func (s *acpSession) flushOthers(w *lineWriter) {
	for _, o := range []*lineWriter{s.message, s.thought, s.user} {
		if o != nil && o != w {
			o.flush()
		}
	}
}

// flush logs the streamed text still waiting for its newline.
func (s *acpSession) flush() { s.flushOthers(nil) }

// toolCall updates what the session knows of a tool call and logs it: a
// line when it is new or its title, kind or status changed, then its
// content.
func (s *acpSession) toolCall(u acpFields) []string {
	id := u.str("toolCallId")
	s.mu.Lock()
	tc, known := s.tools[id]
	before := tc
	if t, ok := u.text("title"); ok {
		tc.title = attempt.Truncate(t, 200)
	}
	if k, ok := u.text("kind"); ok {
		tc.kind = attempt.Truncate(k, 40)
	}
	if st, ok := u.text("status"); ok {
		tc.status = attempt.Truncate(st, 40)
	}
	switch {
	case tc.status == "completed" || tc.status == "failed":
		delete(s.tools, id) // no permission is asked for a finished tool call
	case known || len(s.tools) < acpMaxToolCalls:
		s.tools[id] = tc
	}
	s.mu.Unlock()
	var lines []string
	// A line when something shows: claude-code-acp sends a tool_call twice,
	// and a tool_call_update with nothing but _meta after it finished.
	if tc != (acpToolCall{}) && (!known || tc != before) {
		title := tc.title
		if title == "" {
			title = id
		}
		line := "tool: " + oneLine(title)
		if tc.kind != "" {
			line += " [" + tc.kind + "]"
		}
		if tc.status != "" {
			line += " " + tc.status
		}
		if where := s.locations(u.list("locations")); where != "" {
			line += " (" + where + ")"
		}
		lines = append(lines, line)
	}
	for _, c := range u.list("content") {
		lines = append(lines, s.toolContent(acpObject(c))...)
	}
	return lines
}

// known is what the session knows of a tool call, merged with what a
// permission request says of it (its fields win).
func (s *acpSession) known(u acpFields) acpToolCall {
	s.mu.Lock()
	tc := s.tools[u.str("toolCallId")]
	s.mu.Unlock()
	if t, ok := u.text("title"); ok {
		tc.title = t
	}
	if k, ok := u.text("kind"); ok {
		tc.kind = k
	}
	return tc
}

func (s *acpSession) locations(list []json.RawMessage) string {
	var where []string
	for _, l := range list {
		f := acpObject(l)
		at := s.rel(f.str("path"))
		if n, ok := f.number("line"); ok {
			at += fmt.Sprintf(":%d", int64(n))
		}
		where = append(where, at)
	}
	return oneLine(strings.Join(where, ", "))
}

// toolContent are the lines of one item of a tool call's content: text (up
// to acpMaxContentRows lines), a diff's size, a terminal, or any other
// content block in a line.
func (s *acpSession) toolContent(c acpFields) []string {
	switch c.str("type") {
	case "content":
		block := c.object("content")
		if block.str("type") == "text" {
			return indented(block.str("text"))
		}
		return []string{"  " + contentLine(block)}
	case "diff":
		path := s.rel(c.str("path"))
		newLines := countLines(c.str("newText"))
		if old, ok := c.text("oldText"); ok {
			return []string{fmt.Sprintf("  edit %s: %s → %s", path, record.Plural(int64(countLines(old)), "line"), record.Plural(int64(newLines), "line"))}
		}
		return []string{fmt.Sprintf("  edit %s: new file, %s", path, record.Plural(int64(newLines), "line"))}
	case "terminal":
		return []string{"  terminal " + c.str("terminalId")}
	}
	return []string{"  content: " + oneLine(c.str("type"))}
}

// contentLine is a content block that is not the reply's text in one line:
// text in short, media as a placeholder with its size, a resource by its
// name and address.
func contentLine(c acpFields) string {
	switch t := c.str("type"); t {
	case "text":
		return oneLine(c.str("text"))
	case "image", "audio":
		return fmt.Sprintf("[%s %s, %s]", t, c.str("mimeType"), record.Plural(base64Size(c.str("data")), "byte"))
	case "resource_link":
		name := c.str("name")
		if title := c.str("title"); title != "" {
			name = title
		}
		return fmt.Sprintf("link: %s <%s>", oneLine(name), oneLine(c.str("uri")))
	case "resource":
		r := c.object("resource")
		if text, ok := r.text("text"); ok {
			return fmt.Sprintf("resource %s: %s", oneLine(r.str("uri")), oneLine(text))
		}
		return fmt.Sprintf("[resource %s %s, %s]", oneLine(r.str("uri")), r.str("mimeType"), record.Plural(base64Size(r.str("blob")), "byte"))
	default:
		return "content: " + oneLine(t)
	}
}

// usageUpdate counts the session's cost so far (usage_update; cumulative,
// so it is the attempt's: a session serves one attempt) and says it.
func (s *acpSession) usageUpdate(u acpFields) string {
	used, _ := u.number("used")
	size, _ := u.number("size")
	line := fmt.Sprintf("usage: context %d of %d tokens", int64(used), int64(size))
	cost := u.object("cost")
	amount, ok := cost.number("amount")
	switch currency := cost.str("currency"); {
	case !ok:
	case currency == "USD" || currency == "":
		s.addUsage(record.Usage{CostUSD: amount})
		line += ", cost " + record.FormatUSD(amount)
	default:
		line += fmt.Sprintf(", cost %g %s (not counted: orch counts USD)", amount, oneLine(currency))
	}
	return line
}

// rel is path relative to the session's workspace when it is inside it.
func (s *acpSession) rel(path string) string {
	if r, err := filepath.Rel(s.cwd, path); err == nil && filepath.IsAbs(path) && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return r
	}
	return path
}

func planLines(head string, entries []json.RawMessage) []string {
	lines := []string{fmt.Sprintf("%s: %d entries", head, len(entries))}
	for _, e := range entries {
		f := acpObject(e)
		lines = append(lines, fmt.Sprintf("  [%s] %s", f.str("status"), oneLine(f.str("content"))))
	}
	return lines
}

// indented are text's lines, indented, at most acpMaxContentRows of them.
func indented(text string) []string {
	rows := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var lines []string
	for i, r := range rows {
		if i == acpMaxContentRows {
			lines = append(lines, fmt.Sprintf("  … %s more", record.Plural(int64(len(rows)-i), "line")))
			break
		}
		lines = append(lines, "  "+attempt.Truncate(strings.TrimRight(r, "\r"), 200))
	}
	return lines
}

func countLines(text string) int {
	if text == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
}

func oneLine(s string) string { return attempt.Truncate(strings.Join(strings.Fields(s), " "), 200) }

// base64Size is the size of the data base64 text encodes.
func base64Size(b64 string) int64 { return int64(len(strings.TrimRight(b64, "="))) * 3 / 4 }

// acpFields are a JSON object's fields, each read on its own.
type acpFields map[string]json.RawMessage

// acpObject reads a JSON object's fields (none when it is not one).
func acpObject(raw json.RawMessage) acpFields {
	var m acpFields
	_ = json.Unmarshal(raw, &m)
	return m
}

func (f acpFields) object(key string) acpFields { return acpObject(f[key]) }

// text is a string field; ok is false when it is missing, null or not a
// string.
func (f acpFields) text(key string) (string, bool) {
	var s *string
	if json.Unmarshal(f[key], &s) != nil || s == nil {
		return "", false
	}
	return *s, true
}

func (f acpFields) str(key string) string {
	s, _ := f.text(key)
	return s
}

func (f acpFields) number(key string) (float64, bool) {
	var n *float64
	if json.Unmarshal(f[key], &n) != nil || n == nil {
		return 0, false
	}
	return *n, true
}

// list is an array field's items (none when it is not an array).
func (f acpFields) list(key string) []json.RawMessage {
	var l []json.RawMessage
	_ = json.Unmarshal(f[key], &l)
	return l
}
