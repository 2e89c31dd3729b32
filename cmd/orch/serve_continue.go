package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/store"
)

// retry is orch retry RUN, run in the background (see continueInBackground).
// What orch retry would refuse (a run still running, a completed one,
// nothing to run again, a cuelist that no longer compiles) is refused here
// first, with its message.
func (s *server) retry(w http.ResponseWriter, r *http.Request, id string) {
	if s.onTemporal(w, r, id, "retry", "--", id) {
		return
	}
	if _, err := decideRetry(r.Context(), s.db, id, &retryOptions{}); err != nil {
		refused(w, err)
		return
	}
	s.continueInBackground(w, id, "retry", id)
}

// continuePaused is orch go RUN CUE on a paused run, which continues the
// run: in the background, after the checks orch go makes before it does.
func (s *server) continuePaused(w http.ResponseWriter, r *http.Request, id, cue string) {
	if _, err := goCheck(r.Context(), s.db, id, cue); err != nil {
		failed(w, err)
		return
	}
	rec, err := s.db.LoadRun(r.Context(), id)
	if err != nil {
		failed(w, err)
		return
	}
	if _, _, _, err := continuable(rec, false); err != nil {
		refused(w, err)
		return
	}
	s.continueInBackground(w, id, "go", id, cue)
}

// continueInBackground starts this orch binary with args on the served
// database, detached from the server (it outlives the request and the
// server), from the server's directory, its output to serve-RUN.log next to
// the database; the reply says where.
func (s *server) continueInBackground(w http.ResponseWriter, id string, args ...string) {
	if err := proc.Supported(); err != nil {
		httpError(w, http.StatusNotImplemented, err.Error())
		return
	}
	exe := s.exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			httpError(w, http.StatusInternalServerError, "cannot find the orch binary to continue the run: "+err.Error())
			return
		}
	}
	dbFile := s.db.Path()
	logPath := filepath.Join(filepath.Dir(dbFile), "serve-"+id+".log")
	pid, err := startDetached(exe, append([]string{"--db", dbFile}, args...), logPath)
	if err != nil {
		httpError(w, http.StatusInternalServerError, fmt.Sprintf("cannot start orch %s: %v", args[0], err))
		return
	}
	body, _ := json.Marshal(map[string]string{
		"message": fmt.Sprintf("continuing run %s in the background (pid %d); its output goes to %s", id, pid, logPath)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write(body)
}

// refused replies 409 with the command's own message: the run's state (or
// its cuelist) refuses it. A damaged database is the server's trouble.
func refused(w http.ResponseWriter, err error) {
	if errors.Is(err, store.ErrDamaged) {
		failed(w, err)
		return
	}
	httpError(w, http.StatusConflict, err.Error())
}
