//go:build browser && linux

package main

// Browser tests of orch serve's page: headless Chromium (Debian's package)
// driven by chromedp, against the real server in-process.
//
//	go test -tags browser ./cmd/orch -run TestBrowser
//
// ORCH_UPDATE_GOLDEN=1 (or -update) rewrites the screenshots under
// testdata/screens/web.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/orch-cli/orch/runner/store"
)

const chromium = "/usr/bin/chromium"

// xssPayload is what a hostile agent writes: shown as text, it runs nothing.
const xssPayload = `<script>window.pwned=1</script><img src=x onerror="window.pwned=1">`

// browser starts a headless Chromium for the test; page exceptions fail it.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no %s (apt-get install chromium): %v", chromium, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		// Without these, Chromium's own connections are refused here and it stalls.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelCtx(); cancelAlloc() })
	listen := func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			t.Errorf("page exception: %s", exceptionText(ev.ExceptionDetails))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value))
				}
				t.Logf("console error: %s", strings.Join(parts, " "))
			}
		}
	}
	if err := chromedp.Listen(ctx, listen); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return ctx
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return ""
	}
	s := d.Text
	if d.Exception != nil {
		s += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", s, d.URL, d.LineNumber)
}

// waitJS polls the page until expr (JavaScript) is true.
func waitJS(t *testing.T, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 3000)`))
			t.Fatalf("waiting %v for %s (%s): %v\npage:\n%s", timeout, what, expr, err, page)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func evalString(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return s
}

// newDB creates an empty database (the server opens it read-only).
func newDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orch.db")
	w, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	return path
}

// diamondCuelist: A asks the person a question (its text, its output and a
// blackboard value carry the XSS payload) and waits for the answer; B and C
// come after A, D after both.
var diamondCuelist = `cuelist:
  id: diamond
  defaults: {timeout: 5m}
  cues:
    - id: A
      agents: [worker]
      inputs:
        script:
          - bb_write: {key: plan, value: ` + jsonQuote(xssPayload) + `}
          - output: {note: ` + jsonQuote(xssPayload) + `}
          - escalate: {severity: critical, error: ` + jsonQuote("Keys leaked "+xssPayload) + `}
          - ask: {question: ` + jsonQuote("Which database? "+xssPayload) + `, complexity: deep}
    - {id: B, agents: [worker], dependencies: [A], inputs: {script: [{sleep: 100ms}, {output: {b: done}}]}}
    - {id: C, agents: [worker], dependencies: [A], inputs: {script: [{output: {c: done}}]}}
    - {id: D, agents: [worker], dependencies: [B, C], inputs: {script: [{output: {d: done}}]}}
---
agent: {id: worker, protocol: jsonl, command: [script-agent]}
`

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBrowserLiveRun: opened from the URL orch serve prints on loopback
// (its token in it: reads need none, what changes things does), the page
// shows a live run's DAG (a node per cue, the edges), the question A asks in
// the inbox (as text), answers it from there, and D's node turns completed
// as the run goes on; the agent's <script> and onerror never run.
func TestBrowserLiveRun(t *testing.T) {
	ctx := browser(t)
	db := newDB(t)
	const token = "t0ken"
	base := serveDBAs(t, db, token, true, nil).URL

	run := startRun(t, diamondCuelist, db)

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?token="+token+"#/")); err != nil {
		t.Fatal(err)
	}
	// The question reaches the inbox, its text as text.
	waitJS(t, ctx, "the question in the inbox", `document.querySelector("#inbox li.k-question .text")`, 2*time.Minute)
	if got := evalString(t, ctx, `document.querySelector("#inbox li.k-question .text").textContent`); got != "Which database? "+xssPayload {
		t.Errorf("the question shows as %q", got)
	}
	meta := evalString(t, ctx, `document.querySelector("#inbox li.k-question .meta").textContent`)
	if !strings.Contains(meta, "deep") || !strings.Contains(meta, "worker (A)") {
		t.Errorf("the question's complexity and asker: %q", meta)
	}
	runID := evalString(t, ctx, `document.querySelector("#inbox li.k-question .meta a").textContent`)

	// The critical escalation waits in the inbox too, with its severity,
	// until it is acknowledged from the page (the agent went on meanwhile).
	waitJS(t, ctx, "the escalation in the inbox", `document.querySelector("#inbox li.k-escalation .sev")`, time.Minute)
	if got := evalString(t, ctx, `document.querySelector("#inbox li.k-escalation .text").textContent`); got != "Keys leaked "+xssPayload {
		t.Errorf("the escalation shows as %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector("#inbox li.k-escalation .sev").textContent`); got != "critical" {
		t.Errorf("the escalation's severity badge says %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#inbox li.k-escalation button.ack`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the escalation acknowledged", `!document.querySelector("#inbox li.k-escalation") && document.querySelector("#inbox li.k-question")`, time.Minute)
	if _, body := get(t, base+"/api/runs/"+runID, "Authorization", "Bearer "+token); !strings.Contains(body, `"acknowledged_by": "person (orch serve)"`) {
		t.Errorf("the run's status does not say the escalation was acknowledged:\n%.2000s", body)
	}

	// The run's page: a node per cue, an edge per cue it waits for; D waits.
	// B and C share the agent (concurrency 1): the arbitration orders them,
	// B first (orch plan: "C (after B (arbitration))"), which is an edge too.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?token="+token+"#/run/"+runID)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the DAG", `document.querySelectorAll("svg.dag [data-cue]").length === 4`, time.Minute)
	if edges := evalString(t, ctx, `String((document.querySelector("svg.dag path.edges").getAttribute("d").match(/M/g) || []).length)`); edges != "5" {
		t.Errorf("the DAG has %s edges, want 5 (A->B, A->C, B->D, C->D and B->C)", edges)
	}
	node := func(cue string) string {
		return `document.querySelector('svg.dag [data-cue="` + cue + `"]').getAttribute("class")`
	}
	waitJS(t, ctx, "A at GO", node("A")+`.includes("s-go")`, time.Minute)
	if class := evalString(t, ctx, node("D")); !strings.Contains(class, "s-waiting") {
		t.Errorf("before the answer D is %q, want waiting", class)
	}

	// Answer from the inbox (on this page too); the run goes on to the end.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#inbox li.k-question input`), "PostgreSQL"),
		chromedp.Click(chromedp.CSS(`#inbox li.k-question button`)),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "D completed, live", node("D")+`.includes("s-completed")`, 2*time.Minute)
	waitJS(t, ctx, "the run completed", `document.querySelector(".run h1 .badge").textContent === "completed"`, time.Minute)
	select {
	case <-run.exited:
		if run.err != nil {
			t.Fatalf("orch run: %v\n%s", run.err, run.out.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("orch run did not end\n%s", run.out.String())
	}
	if !strings.Contains(run.out.String(), "q1 answered by person: PostgreSQL") {
		t.Errorf("the run did not get the page's answer:\n%s", run.out.String())
	}

	// A's panel: the output and the blackboard value, as text.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`svg.dag [data-cue="A"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "A's outputs", `document.querySelector(".panel pre.outputs")`, time.Minute)
	waitJS(t, ctx, "the blackboard", `document.querySelector(".panel table.board")`, time.Minute)
	if got := evalString(t, ctx, `document.querySelector(".panel pre.outputs").textContent`); !strings.Contains(got, `"note": "<script>window.pwned=1</script>`) {
		t.Errorf("A's outputs show as %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector(".panel table.board pre").textContent`); !strings.Contains(got, `<script>window.pwned=1</script>`) {
		t.Errorf("the blackboard value shows as %q", got)
	}
	waitJS(t, ctx, "the timeline", `document.querySelectorAll(".timeline .bar").length >= 4`, time.Minute)
	checkNoXSS(t, ctx)
}

// liveRun is an orch run started in the background by startRun.
type liveRun struct {
	dir    string        // its directory, holding cuelist.yaml
	out    *bytes.Buffer // what it printed (read once exited is closed)
	exited chan struct{}
	err    error // how it exited
}

// startRun starts orch run of cuelist (written to cuelist.yaml in a new
// directory) on the database db, the test binary's agents on its PATH; it
// is killed at the test's end if still running.
func startRun(t *testing.T, cuelist, db string) *liveRun {
	t.Helper()
	bin := binaries(t)
	r := &liveRun{dir: t.TempDir(), out: &bytes.Buffer{}, exited: make(chan struct{})}
	if err := os.WriteFile(filepath.Join(r.dir, "cuelist.yaml"), []byte(cuelist), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "orch"), "run", "cuelist.yaml")
	cmd.Dir, cmd.Stdout, cmd.Stderr = r.dir, r.out, r.out
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "ORCH_DB="+db, "NO_COLOR=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.err = cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			_ = cmd.Process.Kill()
			<-r.exited
		}
	})
	return r
}

// checkNoXSS: no script but the page's own (its modules, and its import
// map in the head), no img, and nothing ran.
func checkNoXSS(t *testing.T, ctx context.Context) {
	t.Helper()
	pwned := evalString(t, ctx, `typeof window.pwned`) != "undefined"
	scripts := evalString(t, ctx, `String(Array.from(document.scripts).filter((s) => !s.src.includes("/assets/") && !(s.type === "importmap" && s.parentNode === document.head)).length)`)
	imgs := evalString(t, ctx, `String(document.images.length)`)
	if pwned || scripts != "0" || imgs != "0" {
		t.Errorf("an agent's markup became HTML: window.pwned set %v, %s foreign scripts, %s images", pwned, scripts, imgs)
	}
}

// TestBrowserTokenEveryRequest: where every request needs the token (orch
// serve off loopback), the page still loads every module it imports (the
// import map gives their URLs the token, and the page's policy allows the
// map by its hash) and renders the runs.
func TestBrowserTokenEveryRequest(t *testing.T) {
	ctx := browser(t)
	const token = "t0ken"
	base := serveDBAs(t, newDB(t), token, false, nil).URL
	if code, _ := get(t, base+"/assets/run.js"); code != 401 {
		t.Fatalf("GET /assets/run.js without the token: %d, want 401", code)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?token="+token+"#/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the runs rendered", `window.orchRendered && window.orchRendered.view === "runs"`, time.Minute)
	if got := evalString(t, ctx, `document.getElementById("live").textContent`); got != "live" {
		t.Errorf("the page's stream says %q, want live", got)
	}
}
