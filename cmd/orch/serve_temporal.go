package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// onTemporal does a person's action on a run on Temporal (a GO, a stop, an
// answer, a retry) as the orch command with args does: handed over to
// orch-temporal, synchronously (a signal is quick), never by continuing
// the run in this process or another local one. It reports whether the
// run is on Temporal; then it has replied.
func (s *server) onTemporal(w http.ResponseWriter, r *http.Request, id string, args ...string) bool {
	t, err := s.db.TemporalRun(r.Context(), id)
	if err != nil {
		failed(w, err)
		return true
	}
	if t == nil {
		return false
	}
	var out, errOut bytes.Buffer
	code := run(append([]string{"--db", s.db.Path()}, args...), &streams{in: bytes.NewReader(nil), out: &out, err: &errOut})
	msg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out.String()+"\n"+errOut.String()), "orch: "))
	switch code {
	case 0:
		body, _ := json.Marshal(map[string]string{"message": msg})
		reply(w, body, nil)
	case exitUsage:
		httpError(w, http.StatusBadRequest, msg)
	default:
		httpError(w, http.StatusConflict, msg)
	}
	return true
}
