//go:build temporal_e2e && linux

package temporal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemporalRemoteWithToken: orch run --engine temporal --git-remote
// with a token in the URL (https://x-access-token:TOKEN@host/...), and a
// worker given it as $ORCH_GIT_REMOTE: the worker pushes with it, the
// follower fetches the run's branches with it, and the token is nowhere in
// the workflow's history, orch status, orch events or what orch run printed.
// git reaches the bare repository only under the URL with the token.
func TestTemporalRemoteWithToken(t *testing.T) {
	const token = "ghs_FakeE2eT0ken77"
	const remote = "https://x-access-token:" + token + "@git.example.invalid/org/repo.git"
	s := newWorktreeSetup(t, map[string]string{
		"chain.yaml":  "cuelist:\n  id: chain\n  include: [writer.yaml]\n  cues:\n    - {id: A, agents: [writer]}\n",
		"writer.yaml": "agent: {id: writer, run: \"echo a > a.txt\", workspace: worktree, placement: {queue: tok}}\n",
	})
	env := append(s.env[:len(s.env):len(s.env)], "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=url."+s.remote+".insteadOf", "GIT_CONFIG_VALUE_0="+remote)
	clone := filepath.Join(s.tmp, "w3")
	s.git(s.tmp, "clone", "--quiet", s.remote, clone)
	startProc(t, s.tmp, "workertok", append(env, "ORCH_GIT_REMOTE="+remote), clone, s.orch, "worker", "--root", clone, "--queue", "tok")
	follow := startProc(t, s.tmp, "run", env, s.seed, s.orch, "run", "--engine", "temporal", "--db", s.db, "--git-remote", remote, "chain.yaml")
	if code := follow.wait(t); code != 0 {
		t.Fatalf("orch run: exit %d", code)
	}
	id := runID(t, s.run, s.db)
	if st := normalStatus(t, s.run, s.db, id); st.State != "completed" {
		t.Fatalf("run %s: %s", id, st.State)
	}
	a := s.git(clone, "rev-parse", "refs/heads/orch/"+id+"/A/1")
	if got := s.git(s.remote, "rev-parse", "refs/heads/orch/"+id+"/A/1"); got != a {
		t.Errorf("the branch on the remote is at %s, want %s", got, a)
	}
	printed, _ := os.ReadFile(follow.log)
	if !strings.Contains(string(printed), "fetched from https://git.example.invalid/org/repo.git") {
		t.Errorf("the follower did not fetch the run's branches with its token:\n%s", printed)
	}
	s.git(s.seed, "rev-parse", "--verify", "refs/heads/orch/"+id+"/A/1")
	status, _ := s.run("status", "--db", s.db, id, "--output", "json")
	events, _ := s.run("events", "--db", s.db, id)
	eventsJSON, _ := s.run("events", "--db", s.db, id, "--output", "json")
	history := workflowHistory(t, eventsJSON)
	for what, text := range map[string]string{"orch status": status, "orch events": events, "orch events --output json": eventsJSON,
		"the workflow's history": history, "orch run's output": string(printed)} {
		if strings.Contains(text, token) {
			t.Errorf("%s holds the token", what)
		}
	}
	if !strings.Contains(history, "https://git.example.invalid/org/repo.git") {
		t.Errorf("the workflow's history does not name the remote without its token")
	}
}
