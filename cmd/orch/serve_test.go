package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/serve"
)

const xss = `<script>alert(1)</script>`

// serveFixture records a run r1 (its cuelist, reason and output carry a
// <script>) through a writing handle, and serves the database as orch serve
// does, with token (none: loopback). The writing handle is returned, to
// write as another process would while the server reads.
func serveFixture(t *testing.T, token string) (*httptest.Server, *store.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orch.db")
	w, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	ctx := context.Background()
	started := record.RunStartedData{Cuelist: "c" + xss, Cues: []record.CueInfo{{ID: "A", Agents: []string{"a"}}}}
	if err := w.Append(ctx, record.Event{RunID: "r1", Type: record.EvRunStarted, Data: started},
		record.Event{RunID: "r1", Type: record.EvRunState, State: string(record.RunCompleted), Reason: "done " + xss}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.BlackboardWrite(ctx, "r1", "plan", json.RawMessage(`"`+xss+`"`), "person"); err != nil {
		t.Fatal(err)
	}
	w.Log(record.LogLine{RunID: "r1", Cue: "A", Agent: "a", Attempt: 1, Stream: "stderr", Text: xss})
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return serveDB(t, path, token), w
}

// serveDB serves the database at path as orch serve --db path does.
func serveDB(t *testing.T, path, token string) *httptest.Server {
	t.Helper()
	return serveDBWith(t, path, token, nil)
}

// serveDBWith is serveDB with wrap (if not nil) around the server's handler.
func serveDBWith(t *testing.T, path, token string, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	return serveDBAs(t, path, token, false, wrap)
}

// serveDBAs is serveDBWith; openReads as orch serve on loopback with a
// token (the default): reads need no token, what changes things does.
func serveDBAs(t *testing.T, path, token string, openReads bool, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	ctl := control.New(control.Config{DB: path})
	if _, err := ctl.Reader(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	s := serve.New(serve.Options{Control: ctl, Token: token, OpenReads: openReads})
	h := s.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { s.Close(); srv.Close() })
	return srv
}

func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

func post(t *testing.T, url, body string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeAPI(t *testing.T) {
	srv, _ := serveFixture(t, "")
	u := srv.URL
	for _, c := range []struct {
		path string
		code int
		has  string
	}{
		{"/api/runs", 200, `"id": "r1"`},
		{"/api/runs/r1", 200, `"state": "completed"`},
		{"/api/runs/last", 200, `"cuelist": "c\u003cscript\u003e`},
		{"/api/runs/nope", 404, `"error"`},
		{"/api/runs/r1/events", 200, `"type":"run/started"`},
		{"/api/runs/r1/events?after=1", 200, `"seq":2`},
		{"/api/runs/r1/events?after=x", 400, `want a sequence number`},
		{"/api/runs/r1/logs", 200, `"line":"\u003cscript\u003ealert(1)\u003c/script\u003e"`},
		{"/api/runs/r1/logs?cue=B", 200, `[]`},
		{"/api/runs/r1/blackboard", 200, `"key":"plan"`},
		{"/../../etc/passwd", 404, ""},
		{"/serve_assets/index.html", 404, ""},
		{"/index.html", 404, ""},
	} {
		code, body := get(t, u+c.path)
		if code != c.code || !strings.Contains(body, c.has) {
			t.Errorf("GET %s: %d %s; want %d with %s", c.path, code, body, c.code, c.has)
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("GET %s: an agent's <script> came back unescaped: %s", c.path, body)
		}
	}
	code, page := get(t, u+"/")
	if code != 200 || !strings.Contains(page, `src="assets/app.js"`) || strings.Contains(page, "r1") {
		t.Errorf("index page (static: the data comes from the API): %d\n%s", code, page)
	}
	checkAssets(t, u, "")
	// The POSTs do what orch answer, go and stop do, and say what they say.
	for _, c := range []struct {
		path, body string
		code       int
		has        string
	}{
		{"/api/runs/r1/stop", "", 200, "run r1 is already completed"},
		{"/api/runs/r1/stop", `{"cue":"A"}`, 200, "run r1 is already completed"},
		{"/api/runs/r1/stop", `{"cue":"Z"}`, 400, "run r1 has no cue Z"},
		{"/api/runs/r1/go", `{"cue":"A"}`, 400, `nothing waits for GO`},
		{"/api/runs/r1/go", `{"cue":"Z"}`, 400, `has no cue \"Z\"`},
		{"/api/runs/r1/answer", `{"question":"q1","answer":"yes"}`, 409, `has no question \"q1\"`},
		{"/api/runs/r1/answer", `{"question":"q1","answer":" "}`, 400, `the answer is empty`},
		{"/api/runs/r1/answer", `not json`, 400, `not the JSON object`},
	} {
		code, body := post(t, u+c.path, c.body)
		if code != c.code || !strings.Contains(body, c.has) {
			t.Errorf("POST %s %s: %d %s; want %d with %s", c.path, c.body, code, body, c.code, c.has)
		}
	}
}

// checkAssets: the page and its scripts and styles come with their types and
// a policy that allows no inline script and no other origin; nothing else is
// served from the assets.
func checkAssets(t *testing.T, u, query string) {
	t.Helper()
	for path, ctype := range map[string]string{"/": "text/html", "/assets/app.js": "text/javascript", "/assets/dag.js": "text/javascript", "/assets/app.css": "text/css"} {
		resp, err := http.Get(u + path + query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) ||
			!strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: %d %q, CSP %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), csp)
		}
	}
	for _, path := range []string{"/assets/index.html", "/assets/nope.js", "/assets/..%2fserve.go", "/assets/%2e%2e%2fserve_api.go"} {
		if code, _ := get(t, u+path+query); code != 404 {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
}

func TestServeTokenAndOrigin(t *testing.T) {
	srv, _ := serveFixture(t, "s3cret")
	u := srv.URL
	if code, page := get(t, u+"/?token=s3cret"); code != 200 || !strings.Contains(page, `src="assets/app.js?token=s3cret"`) {
		t.Errorf("the page's asset URLs carry the token: %d\n%s", code, page)
	}
	if code, page := get(t, u+"/?token=s3cret"); code != 200 || !strings.Contains(page, `"./assets/util.js":"./assets/util.js?token=s3cret"`) {
		t.Errorf("the page's import map gives the modules it imports the token: %d\n%s", code, page)
	}
	checkAssets(t, u, "?token=s3cret")
	if code, _ := get(t, u+"/assets/app.js"); code != 401 {
		t.Errorf("an asset without the token: %d, want 401", code)
	}
	if code, _ := get(t, u+"/api/runs"); code != 401 {
		t.Errorf("no token: %d, want 401", code)
	}
	if code, _ := get(t, u+"/api/runs?token=wrong"); code != 401 {
		t.Errorf("wrong token: %d, want 401", code)
	}
	if code, _ := get(t, u+"/api/runs?token=s3cret"); code != 200 {
		t.Errorf("token in the query: %d, want 200", code)
	}
	if code, _ := get(t, u+"/api/runs", "Authorization", "Bearer s3cret"); code != 200 {
		t.Errorf("bearer token: %d, want 200", code)
	}
	bearer := []string{"Authorization", "Bearer s3cret"}
	if code, body := post(t, u+"/api/runs/r1/stop", "", append(bearer, "Origin", "http://evil.example")...); code != 403 {
		t.Errorf("POST from a foreign origin: %d %s, want 403", code, body)
	}
	if code, body := post(t, u+"/api/runs/r1/stop", "", append(bearer, "Referer", "http://evil.example/x")...); code != 403 {
		t.Errorf("POST with a foreign referer: %d %s, want 403", code, body)
	}
	if code, body := post(t, u+"/api/runs/r1/stop", "", append(bearer, "Origin", u)...); code != 200 {
		t.Errorf("POST from the same origin: %d %s, want 200", code, body)
	}
	if code, body := post(t, u+"/api/runs/r1/stop", "", bearer...); code != 200 {
		t.Errorf("POST from a client with the token and no origin: %d %s, want 200", code, body)
	}
	if code, _ := post(t, u+"/api/runs/r1/stop", "", "Origin", u); code != 401 {
		t.Errorf("POST without the token: %d, want 401", code)
	}
	// Without a token (loopback), a request for another host name (DNS
	// rebinding) is refused.
	open, _ := serveFixture(t, "")
	req, _ := http.NewRequest("GET", open.URL+"/api/runs", nil)
	req.Host = "evil.example:80"
	if code, _ := do(t, req); code != 403 {
		t.Errorf("foreign Host without a token: %d, want 403", code)
	}
}

// TestServeNonLoopbackNeedsToken: orch serve on a non-loopback address
// without --token makes one, prints it once, and refuses requests without it.
func TestServeNonLoopbackNeedsToken(t *testing.T) {
	if serve.IsLoopback("0.0.0.0") || serve.IsLoopback("192.168.1.2") || !serve.IsLoopback("127.0.0.1") || !serve.IsLoopback("::1") || !serve.IsLoopback("localhost") {
		t.Fatal("isLoopback is wrong")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "orch.db")
	w, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		f := newFactory(&streams{out: pw, err: io.Discard})
		defer f.close()
		root := newRootCmd(f)
		root.SetArgs([]string{"serve", "--db", path, "--addr", "0.0.0.0:0"})
		err := root.ExecuteContext(ctx)
		pw.CloseWithError(io.EOF)
		done <- exitCode(err)
	}()
	sc := bufio.NewScanner(pr)
	var url, token string
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "http://"); i >= 0 {
			url = line[i:]
		}
		if i := strings.Index(line, "token (printed this once): "); i >= 0 {
			token = line[i+len("token (printed this once): "):]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if token == "" || !strings.Contains(url, "?token="+token) {
		t.Fatalf("no token printed: url %q token %q", url, token)
	}
	base := strings.Replace(url[:strings.Index(url, "?")], "0.0.0.0", "127.0.0.1", 1)
	if code, _ := get(t, base+"api/runs"); code != 401 {
		t.Errorf("non-loopback server without the token: %d, want 401", code)
	}
	if code, body := get(t, base+"api/runs", "Authorization", "Bearer "+token); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("with the token: %d %s", code, body)
	}
	cancel() // as SIGINT does: a graceful shutdown, exit 0
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("orch serve exited %d after its context ended", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("orch serve did not shut down")
	}
}

// TestServeStream: the event stream delivers what another handle writes
// while it streams, in seq order, and a client that resumes with
// Last-Event-ID gets every later event once. The page's one stream
// (/api/stream?run=ID) does the same, its run list and inbox (which carry
// no id) around the events.
func TestServeStream(t *testing.T) {
	for name, path := range map[string]string{"per-run": "/api/runs/r1/stream", "combined": "/api/stream?run=r1"} {
		t.Run(name, func(t *testing.T) { testStream(t, path) })
	}
}

func testStream(t *testing.T, path string) {
	srv, w := serveFixture(t, "")
	combined := strings.HasPrefix(path, "/api/stream")
	ctx := context.Background()
	written := make(chan struct{})
	read := func(lastID string, n int, writeMore bool) []int64 {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(rctx, "GET", srv.URL+path, nil)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		var seqs []int64
		var names []string // the events without an id
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		wrote := !writeMore
		event, id := "", ""
		for len(seqs) < n && sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "data: ") && strings.Contains(line, "<script>") {
				t.Errorf("unescaped data: %s", line)
			}
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				event = v
			}
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			if line != "" || event == "" {
				continue
			}
			if id == "" {
				names = append(names, event)
			} else {
				if event != "event" {
					t.Errorf("event %q has an id (%s): only the run's events do", event, id)
				}
				seq, _ := strconv.ParseInt(id, 10, 64)
				seqs = append(seqs, seq)
			}
			event, id = "", ""
			if !wrote && len(seqs) == 2 { // the recorded ones came: now write more, as another process would
				wrote = true
				go func() {
					defer close(written)
					for i := range 5 {
						if err := w.Append(ctx, record.Event{RunID: "r1", Type: record.EvNote, Reason: "note " + strconv.Itoa(i)}); err != nil {
							t.Error(err)
						}
					}
				}()
			}
		}
		if len(seqs) < n {
			t.Fatalf("the stream gave %v, want %d events (%v)", seqs, n, sc.Err())
		}
		if combined && (len(names) < 2 || names[0] != "runs" || names[1] != "inbox") {
			t.Errorf("the stream began with %v, want the runs and the inbox first", names)
		}
		return seqs
	}
	seqs := read("", 7, true)
	<-written
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("seqs out of order: %v", seqs)
		}
	}
	resumed := read(strconv.FormatInt(seqs[3], 10), 3, false)
	if want := seqs[4:7]; !equalSeqs(resumed, want) {
		t.Errorf("resumed after %d: %v, want %v", seqs[3], resumed, want)
	}
	if combined {
		if code, body := get(t, srv.URL+"/api/stream?run=nosuch"); code != http.StatusNotFound {
			t.Errorf("a stream of no such run: %d %s", code, body)
		}
		if code, body := get(t, srv.URL+"/api/stream?run=r1", "Last-Event-ID", "x"); code != http.StatusBadRequest {
			t.Errorf("a bad Last-Event-ID: %d %s", code, body)
		}
	}
}

func equalSeqs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
