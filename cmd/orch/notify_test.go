//go:build unix

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookReceiver is a webhook on loopback that keeps what it was sent.
type hookReceiver struct {
	mu       sync.Mutex
	requests int
	notices  []notice
	fail     int // answer 500 to this many requests first
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests++
	if h.fail > 0 {
		h.fail--
		http.Error(w, "busy", http.StatusInternalServerError)
		return
	}
	var n notice
	if err := json.Unmarshal(body, &n); err != nil || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "not a JSON notice", http.StatusBadRequest)
		return
	}
	h.notices = append(h.notices, n)
}

func notifyDir(t *testing.T, files map[string]string) string {
	t.Helper()
	t.Setenv("PATH", binaries(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := writeFiles(t, files)
	t.Setenv("ORCH_DB", filepath.Join(dir, "orch.db"))
	return dir
}

// noticeEvents returns the run's notice events as orch events prints them.
func noticeEvents(t *testing.T, dir string) []map[string]any {
	t.Helper()
	_, out, errs := runOrch(t, dir, "events", "last", "--output", "json")
	var evs []map[string]any
	for _, line := range strings.Split(out, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["type"] == "notice" {
			evs = append(evs, ev)
		}
	}
	if len(evs) == 0 {
		t.Fatalf("no notice events:\n%s%s", out, errs)
	}
	return evs
}

// A webhook sees the person's question, the manual GO the run waits for and
// the failure; it answers 500 first and gets the notice again. Each notice
// is recorded as sent, naming the webhook by its host only (the path holds
// a token).
func TestNotifyWebhook(t *testing.T) {
	defer func(d time.Duration) { notifyBackoff = d }(notifyBackoff)
	notifyBackoff = 10 * time.Millisecond
	hook := &hookReceiver{fail: 1}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	dir := notifyDir(t, map[string]string{"cuelist.yaml": `cuelist:
  id: notified
  notify: {url: "` + srv.URL + `/hooks/tok-secret-123"}
  guardrails: {question_timeout: 200ms}
  cues:
    - {id: LONELY, agents: [asker], inputs: {script: [{ask: {question: "anyone?", complexity: quick}}]}}
    - {id: DEPLOY, agents: [ok], go: manual}
---
agent: {id: asker, protocol: jsonl, command: [script-agent]}
---
agent: {id: ok, command: ["true"]}
`})
	if code, out, errs := runOrch(t, dir, "run", "cuelist.yaml"); code != exitPaused {
		t.Fatalf("orch run: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runOrch(t, dir, "go", "last", "DEPLOY"); code != exitFailed {
		t.Fatalf("orch go: exit %d\n%s%s", code, out, errs)
	}

	hook.mu.Lock()
	defer hook.mu.Unlock()
	var said []string
	for _, n := range hook.notices {
		said = append(said, n.Kind+": "+n.Subject)
	}
	all := strings.Join(said, "\n")
	for _, want := range []string{
		"needed: question q1 from asker (LONELY): anyone?",
		"needed: run ", "waiting for GO: DEPLOY",
		"failed: run ", "failed: LONELY",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the webhook was not told %q; it got:\n%s", want, all)
		}
	}
	if hook.requests != len(hook.notices)+1 {
		t.Errorf("%d requests for %d notices: the one answered 500 was not tried again", hook.requests, len(hook.notices))
	}

	evs := noticeEvents(t, dir) // the run's notices, both commands'
	raw, _ := json.Marshal(evs)
	if strings.Contains(string(raw), "tok-secret") {
		t.Errorf("a notice event shows the webhook's path: %s", raw)
	}
	retried := false
	for _, ev := range evs {
		data, _ := ev["data"].(map[string]any)
		if ev["state"] != "sent" || data["to"] != "webhook "+srv.URL {
			t.Errorf("notice event %v", ev)
		}
		retried = retried || data["tries"] == float64(2)
	}
	if !retried {
		t.Errorf("no notice event counts the try again: %s", raw)
	}
}

// A command gets each notice as JSON on its stdin; notify.on chooses which.
// orch go --notify adds another.
func TestNotifyCommand(t *testing.T) {
	dir := notifyDir(t, map[string]string{"cuelist.yaml": `cuelist:
  id: notified
  notify: {run: [sh, -c, "cat >> notices.jsonl; echo >> notices.jsonl"], on: [completed]}
  cues:
    - {id: A, agents: [ok], go: manual}
---
agent: {id: ok, command: ["true"]}
`, "flag.sh": "cat > flag.json\n"})
	if code, out, errs := runOrch(t, dir, "run", "cuelist.yaml"); code != exitPaused {
		t.Fatalf("orch run: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "notices.jsonl")); err == nil {
		t.Error("a needed notice was sent with notify.on: [completed]")
	}
	if code, out, errs := runOrch(t, dir, "go", "last", "A", "--notify", "sh flag.sh"); code != 0 {
		t.Fatalf("orch go: exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "notices.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var n notice
	if err := json.Unmarshal(b, &n); err != nil || n.Kind != "completed" || n.Cuelist != "notified" || !strings.Contains(n.Subject, "completed") {
		t.Errorf("the command read %q (%v)", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "flag.json")); !strings.Contains(string(b), `"kind":"completed"`) {
		t.Errorf("the --notify command read %q", b)
	}
	if evs := noticeEvents(t, dir); len(evs) != 2 || evs[0]["state"] != "sent" || evs[1]["state"] != "sent" {
		t.Errorf("notice events: %v", evs)
	}
	if _, out, _ := runOrch(t, dir, "events", "last"); !strings.Contains(out, "notice completed sent to command sh (1 try)") {
		t.Errorf("orch events:\n%s", out)
	}
}

// A webhook that never answers does not hold the run's end past
// notifyWait: the notice is given up and recorded as failed. The same
// notice through --notify on the command line.
func TestNotifyHangingWebhook(t *testing.T) {
	defer func(d time.Duration) { notifyWait = d }(notifyWait)
	notifyWait = 200 * time.Millisecond
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := notifyDir(t, map[string]string{"cuelist.yaml": `cuelist:
  id: quick
  cues:
    - {id: A, agents: [ok]}
---
agent: {id: ok, command: ["true"]}
`})
	done := make(chan int, 1)
	go func() {
		code, _, _ := runOrch(t, dir, "run", "cuelist.yaml", "--notify", srv.URL)
		done <- code
	}()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("orch run: exit %d", code)
		}
	case <-time.After(2 * time.Minute): // the webhook is released only after the run ended
		t.Fatal("the run's end waited for a webhook that never answers")
	}
	evs := noticeEvents(t, dir)
	if len(evs) != 1 || evs[0]["state"] != "failed" || !strings.Contains(evs[0]["reason"].(string), "the run ended") {
		t.Errorf("notice events: %v", evs)
	}
}

// --notify needs a URL or a command.
func TestNotifyFlagChecked(t *testing.T) {
	code, _, errs := runOrch(t, "", "run", "nothing.yaml", "--notify", "https://")
	if code != exitUsage || !strings.Contains(errs, "--notify https://: not a valid URL") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
