package spec

import (
	"bytes"
	"encoding/json"
)

// Notify is a cuelist's `notify:`. Written as a string (each, summary) it
// says only how the person's questions are shown; written as an object it
// can also say where notices go (a command, a webhook) and when.
type Notify struct {
	Questions string   `json:"questions,omitempty"` // each (default) or summary
	On        []string `json:"on,omitempty"`        // needed, failed, completed; empty: all
	Run       []string `json:"run,omitempty"`       // argv given each notice as JSON on stdin
	URL       string   `json:"url,omitempty"`       // a webhook each notice is POSTed to
	Timeout   Duration `json:"timeout,omitempty"`   // one delivery's bound
}

// notifyFields keeps encoding/json from recursing into Notify's own methods.
type notifyFields Notify

func (n *Notify) UnmarshalJSON(b []byte) error {
	if s := bytes.TrimSpace(b); len(s) > 0 && s[0] == '"' {
		_ = json.Unmarshal(s, &n.Questions)
		return nil
	}
	// A wrong type has already been reported by the schema; failing here
	// would stop encoding/json from decoding the fields after it.
	_ = json.Unmarshal(b, (*notifyFields)(n))
	return nil
}

// MarshalJSON writes the short form when it says everything, as it was written.
func (n Notify) MarshalJSON() ([]byte, error) {
	if n.On == nil && n.Run == nil && n.URL == "" && n.Timeout == 0 {
		return json.Marshal(n.Questions)
	}
	return json.Marshal(notifyFields(n))
}

// SummaryQuestions says whether the person's questions are shown as a summary.
func (n *Notify) SummaryQuestions() bool { return n != nil && n.Questions == "summary" }

// Sends says whether notices go anywhere.
func (n *Notify) Sends() bool { return n != nil && (len(n.Run) > 0 || n.URL != "") }

// Wants says whether a notice of this kind (needed, failed, completed) is sent.
func (n *Notify) Wants(kind string) bool {
	if len(n.On) == 0 {
		return true
	}
	for _, k := range n.On {
		if k == kind {
			return true
		}
	}
	return false
}

// notify warns about a notify block whose settings can have no effect.
func (c *checker) notify(cl *Cuelist) {
	n := cl.Notify
	if n == nil || n.Sends() {
		return
	}
	if n.On != nil {
		c.warnAtKey(cl.Origin, "/notify/on", "unused-field", "notify.on has no effect without notify.run or notify.url (where notices go)")
	}
	if n.Timeout != 0 {
		c.warnAtKey(cl.Origin, "/notify/timeout", "unused-field", "notify.timeout has no effect without notify.run or notify.url (where notices go)")
	}
}
