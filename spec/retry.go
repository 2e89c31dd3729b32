package spec

import (
	"strconv"
	"strings"
)

// retry warns about a retry block that can never retry: one attempt in all
// (max_attempts 1, or left out, with retry_on), or retry_on naming only
// failures that cannot happen (an exit status above 255; exit:0 for a plain
// process, whose exit 0 is success).
func (c *checker) retry(a *Agent) {
	r := a.Retry
	if r == nil || a.Doc != nil && a.Doc.damaged { // a bad max_attempts or retry_on is reported already
		return
	}
	if r.MaxAttempts <= 1 {
		how := "max_attempts is 1"
		if r.MaxAttempts == 0 {
			how = "max_attempts is left out (1)"
		}
		c.warnAtKey(a.Origin, "/retry", "retry-never", "agent %q: this retry never retries: %s, so the first attempt is the only one (set max_attempts: 2 or more)", a.ID, how)
		return
	}
	if len(r.RetryOn) == 0 {
		return
	}
	var never []string
	for _, on := range r.RetryOn {
		if why := neverFails(a, on); why != "" {
			never = append(never, on+" ("+why+")")
		}
	}
	if len(never) == len(r.RetryOn) {
		c.warnAtKey(a.Origin, "/retry", "retry-never", "agent %q: this retry never retries: retry_on names only failures that cannot happen: %s", a.ID, strings.Join(never, ", "))
		return
	}
	for i, on := range r.RetryOn {
		if why := neverFails(a, on); why != "" {
			c.warnAt(a.Origin, Pointer("retry", "retry_on", i), "retry-never", "agent %q: retry_on %s never matches: %s", a.ID, on, why)
		}
	}
}

// neverFails says why a failure class cannot happen to the agent, or "".
func neverFails(a *Agent, class string) string {
	switch class {
	case "max_tokens", "max_turn_requests", "refusal":
		if a.Protocol != "acp" {
			return "only an acp agent's turn ends with that stop reason"
		}
		return ""
	}
	if class == "loop_detected" {
		if a.Protocol != "jsonl" {
			return "only a jsonl agent's requests pass the loop guard"
		}
		return ""
	}
	if class == "error" || strings.HasPrefix(class, "error_") {
		if CLIProtocols[a.Protocol] == "" || (class != "error" && a.Protocol != "claude-code") {
			return "only a coding CLI's (claude-code, codex) error has that class; error_ ones are claude-code's"
		}
		return ""
	}
	code, ok := strings.CutPrefix(class, "exit:")
	if !ok || code == "any" {
		return ""
	}
	n, err := strconv.Atoi(code)
	switch {
	case err != nil: // the schema reports it
		return ""
	case n > 255:
		return "exit statuses are 0 to 255"
	case n == 0 && a.Protocol != "jsonl":
		return "exit status 0 is success for a plain process"
	}
	return ""
}

// warnAtKey reports at the key of the field at ptr ("retry:"), for a
// warning about the whole block.
func (c *checker) warnAtKey(o Origin, ptr, code, format string, args ...any) {
	pos := o.At(ptr)
	if o.Doc != nil {
		pos = o.Doc.KeyPos(o.Ptr + ptr)
	}
	c.diags.Add(Warning, pos, o.Ptr+ptr, code, format, args...)
}
