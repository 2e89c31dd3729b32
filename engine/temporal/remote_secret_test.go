package temporal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/runner/redact"
)

// TestRemoteCredentialNotInTheHistory: a worker whose --git-remote carries
// a token (https://x-access-token:TOKEN@host/...) pushes and fetches with
// it, while the run's history (activities' inputs, results and errors) and
// its events hold the remote without the token, or the token masked: when
// the push works, and when it fails (the message names the remote).
func TestRemoteCredentialNotInTheHistory(t *testing.T) {
	const token = "ghs_FakeT0ken4242"
	const withToken = "https://x-access-token:" + token + "@git.example.invalid/org/repo.git"
	files := map[string]string{
		"chain.yaml":  "cuelist:\n  id: chain\n  include: [writer.yaml]\n  cues:\n    - {id: WRITE, agents: [writer]}\n",
		"writer.yaml": "agent: {id: writer, run: \"echo a > a.txt\", workspace: worktree}\n",
	}
	bare, root, _ := sharedRemote(t, files)
	// git reaches the bare repository under the token's URL, and under the
	// URL without it (what a worker without its own remote would use).
	t.Setenv("GIT_CONFIG_COUNT", "2")
	t.Setenv("GIT_CONFIG_KEY_0", "url."+bare+".insteadOf")
	t.Setenv("GIT_CONFIG_VALUE_0", withToken)
	t.Setenv("GIT_CONFIG_KEY_1", "url."+bare+".insteadOf")
	t.Setenv("GIT_CONFIG_VALUE_1", redact.StripRemote(withToken))
	// Not in $ORCH_GIT_REMOTE (where orch-temporal worker puts it, and the
	// run's redactors learn it): the messages naming the remote mask it
	// themselves, the merge's errors included.
	t.Setenv(redact.RemoteVar, "")
	base := gitT(t, root, "rev-parse", "HEAD")
	in := RunInput{RunID: r1, Path: "chain.yaml", SpecHash: specHashOf(t, root, "chain.yaml"),
		Git: &RunGit{Remote: redact.StripRemote(withToken), Base: base, BaseName: "main"}}

	run := func(t *testing.T) (RunResult, string) {
		var mu sync.Mutex
		var seen []string
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		RegisterWorkflow(env)
		acts := &Activities{Root: root, GitRemote: withToken, Link: func(context.Context) WorkflowLink { return nil }}
		t.Cleanup(acts.Close)
		RegisterActivities(env, acts)
		env.SetTestTimeout(2 * time.Minute)
		keep := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
			var raw json.RawMessage
			if args.Get(&raw) == nil {
				keep(info.ActivityType.Name + " input " + string(raw))
			}
		})
		env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
			var raw json.RawMessage
			if result != nil && result.Get(&raw) == nil {
				keep(info.ActivityType.Name + " result " + string(raw))
			}
			if err != nil {
				keep(info.ActivityType.Name + " error " + err.Error())
			}
		})
		env.ExecuteWorkflow(WorkflowName, in)
		var res RunResult
		if err := env.GetWorkflowResult(&res); err != nil { // a failed run
			res.State, res.Reason = "failed", err.Error()
		}
		logged, _ := json.Marshal(events(t, env))
		res2, _ := json.Marshal(res)
		mu.Lock()
		defer mu.Unlock()
		all := strings.Join(seen, "\n") + "\n" + string(logged) + "\n" + string(res2)
		if strings.Contains(all, token) {
			t.Errorf("the token is in the history or the run's events:\n%s", all)
		}
		return res, all
	}

	t.Run("pushed", func(t *testing.T) {
		res, _ := run(t)
		if res.State != "completed" {
			t.Fatalf("state %s: %s", res.State, res.Reason)
		}
		gitT(t, bare, "rev-parse", "--verify", "refs/heads/orch/"+r1+"/WRITE/1") // pushed with the token's URL
	})
	t.Run("push refused", func(t *testing.T) {
		hook := filepath.Join(bare, "hooks", "pre-receive")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		in.RunID = testRunID("r2")
		res, all := run(t)
		if res.State == "completed" || !strings.Contains(all, "pushing the attempt's branch orch/"+in.RunID+"/WRITE/1 to https://x-access-token:"+redact.RemoteMarker+"@git.example.invalid/org/repo.git") {
			t.Errorf("state %s (%s), want the push's failure with the token masked:\n%s", res.State, res.Reason, all)
		}
	})
	t.Run("merge's push refused", func(t *testing.T) {
		hook := filepath.Join(bare, "hooks", "pre-receive")
		script := "#!/bin/sh\nwhile read old new ref; do case $ref in */WRITE/*) ;; *) exit 1;; esac; done\n"
		if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		in.RunID = testRunID("r3")
		_, all := run(t)
		if !strings.Contains(all, "pushing the merge's branch orch/"+in.RunID+"/result to https://x-access-token:"+redact.RemoteMarker+"@git.example.invalid/org/repo.git") {
			t.Errorf("want the merge's failure with the token masked:\n%s", all)
		}
	})
}
