package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/orch-cli/orch/control"
)

// onRun resolves {id} (an id, a unique prefix or "last") as the commands do.
func (s *Server) onRun(f func(w http.ResponseWriter, r *http.Request, id string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id, ok := s.resolve(w, r, r.PathValue("id")); ok {
			f(w, r, id)
		}
	}
}

// resolve turns ref into a run id, or answers 404 (no such run) or 500.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request, ref string) (string, bool) {
	id, err := s.ctl.Resolve(r.Context(), ref)
	if err != nil {
		failed(w, err)
		return "", false
	}
	return id, true
}

func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	body, err := s.runsJSON(r.Context())
	reply(w, body, err)
}

// runsJSON is orch status --all --output json: every run, newest first,
// the Temporal runs nobody follows caught up first (at most once a second
// each, and briefly: control.CatchUpRuns).
func (s *Server) runsJSON(ctx context.Context) ([]byte, error) {
	s.ctl.CatchUpRuns(ctx)
	list, err := s.ctl.Runs(ctx, control.RunsRequest{All: true})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = control.WriteJSON(&out, list.Runs)
	return out.Bytes(), err
}

// run is orch status RUN --output json, written to the response as it is
// made rather than held whole first (a run of 10,000 cues is megabytes of
// JSON); an error comes before anything was written.
func (s *Server) run(w http.ResponseWriter, r *http.Request, id string) {
	st, err := s.ctl.Status(r.Context(), control.StatusRequest{Run: id, TailLines: control.DefaultTailLines})
	if err != nil {
		failed(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = st.WriteJSON(w)
}

// events is a page of orch events --output json, as a list: after=SEQ
// gives the next page.
func (s *Server) events(w http.ResponseWriter, r *http.Request, id string) {
	after, ok := number(w, r, "after")
	if !ok {
		return
	}
	events, err := s.ctl.Events(r.Context(), control.EventsRequest{Run: id, After: after})
	body, _ := json.Marshal(events)
	if len(events) == 0 {
		body = []byte("[]")
	}
	reply(w, body, err)
}

// logs is a page of orch logs --output json, as a list.
func (s *Server) logs(w http.ResponseWriter, r *http.Request, id string) {
	after, ok := number(w, r, "after")
	if !ok {
		return
	}
	lines, err := s.ctl.Logs(r.Context(), control.LogsRequest{Run: id, Cue: r.URL.Query().Get("cue"), After: after})
	body, _ := json.Marshal(lines)
	reply(w, body, err)
}

// blackboard is orch bb ls --output json.
func (s *Server) blackboard(w http.ResponseWriter, r *http.Request, id string) {
	board, _, err := s.ctl.Board(r.Context(), id)
	body, _ := json.Marshal(board)
	reply(w, body, err)
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, id string) {
	var req struct{ Question, Answer string }
	if !decode(w, r, &req) {
		return
	}
	res, err := s.ctl.Answer(r.Context(), control.AnswerRequest{Run: id, Question: req.Question, Text: req.Answer, Wait: 10 * time.Second})
	if err != nil {
		actionFailed(w, err)
		return
	}
	message(w, http.StatusOK, res.Message)
}

// ack acknowledges a high or critical escalation: {"id": "e42"}.
func (s *Server) ack(w http.ResponseWriter, r *http.Request, id string) {
	var req struct{ ID string }
	if !decode(w, r, &req) {
		return
	}
	res, err := s.ctl.Ack(r.Context(), control.AckRequest{Run: id, ID: req.ID, By: "person (orch serve)"})
	if err != nil {
		actionFailed(w, err)
		return
	}
	message(w, http.StatusOK, res.Message)
}

// goCue says GO for a manual cue: a running run's owner picks it up; a run
// with no owner (paused, or interrupted) is continued by an orch started in
// the background (control decides and checks), never in this server's
// process.
func (s *Server) goCue(w http.ResponseWriter, r *http.Request, id string) {
	var req struct{ Cue string }
	if !decode(w, r, &req) {
		return
	}
	res, err := s.ctl.Go(r.Context(), control.GoRequest{Run: id, Cue: req.Cue, Wait: 10 * time.Second, Detach: &control.Detach{Log: "serve"}})
	switch {
	case err != nil:
		actionFailed(w, err)
	case res.Detached != nil:
		message(w, http.StatusAccepted, res.Message)
	default:
		message(w, http.StatusOK, res.Message)
	}
}

func (s *Server) stop(w http.ResponseWriter, r *http.Request, id string) {
	var req struct{ Cue string } // optional: {"cue": "CUE"} stops that cue and its subtree
	if r.ContentLength != 0 && !decode(w, r, &req) {
		return
	}
	res, err := s.ctl.Stop(r.Context(), control.StopRequest{Run: id, Cue: req.Cue, Wait: 30 * time.Second})
	if err != nil {
		actionFailed(w, err)
		return
	}
	message(w, http.StatusOK, res.Message)
}

// retry is orch retry RUN, run in the background by an orch control
// starts. What orch retry would refuse (a run still running, a completed
// one, nothing to run again, a cuelist that no longer compiles) is refused
// first, with its message.
func (s *Server) retry(w http.ResponseWriter, r *http.Request, id string) {
	res, err := s.ctl.Retry(r.Context(), control.RetryRequest{Run: id, Detach: &control.Detach{Log: "serve"}})
	if err != nil {
		failed(w, err)
		return
	}
	message(w, http.StatusAccepted, res.Message)
}

// message replies {"message": msg} with code.
func message(w http.ResponseWriter, code int, msg string) {
	body, _ := json.Marshal(map[string]string{"message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
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

func reply(w http.ResponseWriter, body []byte, err error) {
	if err != nil {
		failed(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// status is the HTTP status of an error of control's, by its kind: the
// one place the API maps them.
func status(err error) int {
	switch control.KindOf(err) {
	case control.Refused:
		return http.StatusConflict
	case control.Invalid:
		return http.StatusBadRequest
	case control.NotFound, control.Absent:
		return http.StatusNotFound
	case control.Unsupported:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// failed replies with err, its status by its kind.
func failed(w http.ResponseWriter, err error) { httpError(w, status(err), err.Error()) }

// actionFailed replies with the error of an action on a run (answer, go,
// ack, stop): one with no kind of its own but a damaged database is the
// run's state refusing it, as the command says (409).
func actionFailed(w http.ResponseWriter, err error) {
	if control.KindOf(err) == control.Failed && !control.IsDamaged(err) {
		httpError(w, http.StatusConflict, err.Error())
		return
	}
	failed(w, err)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	body, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
