//go:build temporal_e2e && linux

package temporal

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
)

// TestTemporalServeListCatchesUp: a run started with --detach, followed by
// nobody and opened by nobody, shows in orch serve's run list as its
// workflow has it: paused at its manual GO, then completed once orch go
// has given it (the list catches it up, no page of the run is opened).
func TestTemporalServeListCatchesUp(t *testing.T) {
	p := startCollab(t, "collab", "plain.yaml")
	out, code := p.run("run", "--engine", "temporal", "--detach", "--db", p.db, filepath.Join("collab", "held.yaml"))
	m := regexp.MustCompile(`run ([0-9a-f]{12}) `).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("orch run --detach: exit %d\n%s", code, out)
	}
	id := m[1]
	port := freePort(t)
	orch := filepath.Join(filepath.Dir(p.db), "bin", "orch")
	startProc(t, filepath.Dir(p.db), "serve", nil, filepath.Dir(p.db), orch, "serve", "--db", p.db, "--addr", "127.0.0.1:"+port, "--no-token")
	listed := func() string {
		resp, err := http.Get("http://127.0.0.1:" + port + "/api/runs")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var runs []struct{ ID, State string }
		if json.Unmarshal(body, &runs) != nil {
			return ""
		}
		for _, r := range runs {
			if r.ID == id {
				return r.State
			}
		}
		return ""
	}
	eventually(t, "run "+id+" listed paused at its manual GO", func() bool { return listed() == "paused" })
	if out, code := p.run("go", "--db", p.db, id, "HOLD-100"); code != 0 {
		t.Fatalf("orch go: exit %d\n%s", code, out)
	}
	eventually(t, "run "+id+" listed completed", func() bool { return listed() == "completed" })
}
