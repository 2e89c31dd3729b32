package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// server answers orch serve's requests. It reads through db (read-only);
// answer, go and stop open the database for writing per request
// (openExisting), as the commands do, so that no writer is held between.
type server struct {
	cmd   *cobra.Command
	db    *store.DB
	token string
	// openReads: reads need no token (on loopback, where the token guards
	// what changes things); else, with a token, every request needs it.
	openReads bool

	once sync.Once
	done chan struct{} // closed when the server shuts down: streams end
	sums summaries     // the run list and the inbox, for GET /api/stream
	exe  string        // the orch binary that continues runs ("": this one)
}

func newServer(cmd *cobra.Command, db *store.DB, token string) *server {
	return &server{cmd: cmd, db: db, token: token, done: make(chan struct{})}
}

// closing ends the event streams, so that a shutdown need not wait for them.
func (s *server) closing() { s.once.Do(func() { close(s.done) }) }

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /assets/{name}", s.asset)
	mux.HandleFunc("GET /api/runs", s.runs)
	mux.HandleFunc("GET /api/inbox", s.inbox)
	mux.HandleFunc("GET /api/stream", s.streamRuns)
	mux.HandleFunc("GET /api/runs/{id}", s.onRun(s.run))
	mux.HandleFunc("GET /api/runs/{id}/events", s.onRun(s.events))
	mux.HandleFunc("GET /api/runs/{id}/logs", s.onRun(s.logs))
	mux.HandleFunc("GET /api/runs/{id}/blackboard", s.onRun(s.blackboard))
	mux.HandleFunc("GET /api/runs/{id}/stream", s.onRun(s.stream))
	mux.HandleFunc("POST /api/runs/{id}/answer", s.onRun(s.answer))
	mux.HandleFunc("POST /api/runs/{id}/go", s.onRun(s.goCue))
	mux.HandleFunc("POST /api/runs/{id}/ack", s.onRun(s.ack))
	mux.HandleFunc("POST /api/runs/{id}/retry", s.onRun(s.retry))
	mux.HandleFunc("POST /api/runs/{id}/stop", s.onRun(s.stop))
	return s.guard(mux)
}

// guard lets a request through only with the token (when one is in force:
// on loopback only for what changes something), for this host (on loopback:
// a loopback name, against DNS rebinding), and, for one that changes
// something, from the same origin (CSRF). A refused request's connection is
// closed, not kept alive for the next.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		refuse := func(code int, msg string) {
			w.Header().Set("Connection", "close")
			httpError(w, code, msg)
		}
		if s.token != "" && !(read && s.openReads) && !s.hasToken(r) {
			refuse(http.StatusUnauthorized, "this server needs its token (in the URL orch serve printed): Authorization: Bearer TOKEN, or ?token=TOKEN")
			return
		}
		if (s.token == "" || s.openReads) && !isLoopback(hostOnly(r.Host)) {
			refuse(http.StatusForbidden, fmt.Sprintf("host %q is not this machine's loopback", r.Host))
			return
		}
		if !read && !sameOrigin(r) {
			refuse(http.StatusForbidden, "cross-origin request refused")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *server) hasToken(r *http.Request) bool {
	got := r.URL.Query().Get("token")
	if h := r.Header.Get("Authorization"); len(h) > 7 && h[:7] == "Bearer " {
		got = h[7:]
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// sameOrigin: the Origin (else the Referer) names this Host; a request with
// neither is a non-browser client's (browsers send Origin on every
// cross-origin POST).
func sameOrigin(r *http.Request) bool {
	from := r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	if from == "" {
		return true
	}
	u, err := url.Parse(from)
	return err == nil && u.Host != "" && u.Host == r.Host
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// onRun resolves {id} (an id, a unique prefix or "last") as the commands do.
func (s *server) onRun(f func(w http.ResponseWriter, r *http.Request, id string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id, ok := s.resolve(w, r, r.PathValue("id")); ok {
			f(w, r, id)
		}
	}
}

// resolve turns ref into a run id, or answers 404 (no such run) or 500.
func (s *server) resolve(w http.ResponseWriter, r *http.Request, ref string) (string, bool) {
	id, err := resolveRun(r.Context(), s.db, ref)
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitUsage {
		httpError(w, http.StatusNotFound, err.Error())
		return "", false
	}
	if err != nil {
		failed(w, err)
		return "", false
	}
	return id, true
}

// capture runs one of the commands' functions with its output in a buffer.
func capture(f func(io *streams) error) ([]byte, error) {
	var out bytes.Buffer
	err := f(&streams{in: bytes.NewReader(nil), out: &out, err: io.Discard})
	return out.Bytes(), err
}

func (s *server) runs(w http.ResponseWriter, r *http.Request) {
	body, err := s.runsJSON(r.Context())
	reply(w, body, err)
}

// runsJSON is orch status --all --output json: every run, newest first.
func (s *server) runsJSON(ctx context.Context) ([]byte, error) {
	return capture(func(io *streams) error {
		_, err := showRuns(ctx, io, s.db, &statusOptions{output: "json", all: true})
		return err
	})
}

func (s *server) run(w http.ResponseWriter, r *http.Request, id string) {
	replyDirect(w, func(io *streams) error {
		_, err := showRun(r.Context(), io, s.db, id, &statusOptions{output: "json", tailLines: defaultTailLines})
		return err
	})
}

// replyDirect replies with what f prints, written to the response as it
// prints it rather than held whole first (a run of 10,000 cues is
// megabytes of JSON). f prints once it has read everything, so an error
// comes before anything was written, and is replied as failed does.
func replyDirect(w http.ResponseWriter, f func(io *streams) error) {
	out := &firstWrite{w: w}
	err := f(&streams{in: bytes.NewReader(nil), out: out, err: io.Discard})
	if err != nil && !out.started {
		failed(w, err)
	}
}

// firstWrite sets the JSON content type on the response's first write.
type firstWrite struct {
	w       http.ResponseWriter
	started bool
}

func (f *firstWrite) Write(b []byte) (int, error) {
	if !f.started {
		f.started = true
		f.w.Header().Set("Content-Type", "application/json")
	}
	return f.w.Write(b)
}

// events is a page of orch events --output json, as a list: after=SEQ
// gives the next page.
func (s *server) events(w http.ResponseWriter, r *http.Request, id string) {
	after, ok := number(w, r, "after")
	if !ok {
		return
	}
	events, err := s.db.Events(r.Context(), id, after, pageSize)
	body, _ := json.Marshal(events)
	if len(events) == 0 {
		body = []byte("[]")
	}
	reply(w, body, err)
}

// logs is a page of orch logs --output json, as a list.
func (s *server) logs(w http.ResponseWriter, r *http.Request, id string) {
	after, ok := number(w, r, "after")
	if !ok {
		return
	}
	cue := r.URL.Query().Get("cue")
	lines, err := s.db.Logs(r.Context(), id, cue, after, pageSize)
	if err != nil {
		failed(w, err)
		return
	}
	var buf bytes.Buffer
	write := logWriter(&buf, &logsOptions{output: "json"})
	for _, l := range lines {
		_ = write(l)
	}
	reply(w, ndjsonList(buf.Bytes()), nil)
}

// blackboard is orch bb ls --output json.
func (s *server) blackboard(w http.ResponseWriter, r *http.Request, id string) {
	board, err := s.db.Blackboard(r.Context(), id)
	if err != nil {
		failed(w, err)
		return
	}
	out := make([]entryJSON, 0, len(board))
	for _, k := range slices.Sorted(mapKeys(board)) {
		out = append(out, toEntryJSON(board[k]))
	}
	body, err := json.Marshal(out)
	reply(w, body, err)
}

func (s *server) answer(w http.ResponseWriter, r *http.Request, id string) {
	var req struct{ Question, Answer string }
	if !decode(w, r, &req) || s.onTemporal(w, r, id, "answer", "--", id, req.Question, req.Answer) {
		return
	}
	s.writing(w, r, func(ctx context.Context, io *streams, db *store.DB) error {
		return answer(ctx, io, db, id, req.Question, req.Answer, 10*time.Second)
	})
}

// ack acknowledges a high or critical escalation: {"id": "e42"}.
func (s *server) ack(w http.ResponseWriter, r *http.Request, id string) {
	var req struct{ ID string }
	if !decode(w, r, &req) {
		return
	}
	s.writing(w, r, func(ctx context.Context, io *streams, db *store.DB) error {
		return ackEscalation(ctx, io, db, id, req.ID, "person (orch serve)")
	})
}

// goCue says GO for a manual cue: a running run's owner picks it up; a run
// with no owner (paused, or interrupted) is continued by an orch go started
// in the background, never in this server's process.
func (s *server) goCue(w http.ResponseWriter, r *http.Request, id string) {
	var req struct{ Cue string }
	if !decode(w, r, &req) || s.onTemporal(w, r, id, "go", "--", id, req.Cue) {
		return
	}
	if st, err := s.db.RunState(r.Context(), id); err == nil && st != record.RunRunning {
		s.continuePaused(w, r, id, req.Cue)
		return
	}
	s.writing(w, r, func(ctx context.Context, io *streams, db *store.DB) error {
		return goCue(ctx, io, db, db.Path(), id, req.Cue, display{}, false, 10*time.Second)
	})
}

func (s *server) stop(w http.ResponseWriter, r *http.Request, id string) {
	var req struct{ Cue string } // optional: {"cue": "CUE"} stops that cue and its subtree
	if r.ContentLength != 0 && !decode(w, r, &req) {
		return
	}
	if s.onTemporal(w, r, id, append([]string{"stop", "--", id}, nonEmpty(req.Cue)...)...) {
		return
	}
	s.writing(w, r, func(ctx context.Context, io *streams, db *store.DB) error {
		if req.Cue != "" {
			return stopCue(ctx, io, db, id, req.Cue, 30*time.Second)
		}
		return stopRun(ctx, io, db, id, 30*time.Second)
	})
}

// writing opens the database for writing for one request and replies with
// what the command would have printed, as {"message": ...}.
func (s *server) writing(w http.ResponseWriter, r *http.Request, f func(context.Context, *streams, *store.DB) error) {
	db, err := openExisting(s.cmd)
	if err != nil {
		failed(w, err)
		return
	}
	defer db.Close()
	out, err := capture(func(io *streams) error { return f(r.Context(), io, db) })
	var ee *exitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, store.ErrDamaged) {
		httpError(w, http.StatusConflict, err.Error()) // the run's state refuses it, as the command says
		return
	}
	if err != nil {
		failed(w, err)
		return
	}
	body, _ := json.Marshal(map[string]string{"message": string(bytes.TrimSpace(out))})
	reply(w, body, nil)
}

// nonEmpty is s as a list: none when empty.
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		httpError(w, http.StatusBadRequest, "the request body is not the JSON object expected: "+err.Error())
		return false
	}
	return true
}

func number(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("%s=%q: want a sequence number, 0 or more", name, v))
		return 0, false
	}
	return n, true
}

// ndjsonList turns one JSON value a line into a JSON list.
func ndjsonList(b []byte) []byte {
	var out []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		out = append(out, json.RawMessage(slices.Clone(sc.Bytes())))
	}
	if out == nil {
		return []byte("[]")
	}
	list, _ := json.Marshal(out)
	return list
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func reply(w http.ResponseWriter, body []byte, err error) {
	if err != nil {
		failed(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// failed replies with err: a usage error (no such run, cue or question) is
// the client's, 400 (404 for a run not found); any other is the server's.
func failed(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitUsage {
		code = http.StatusBadRequest
	}
	httpError(w, code, err.Error())
}

func httpError(w http.ResponseWriter, code int, msg string) {
	body, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
