package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/orch-cli/orch/runner/redact"
)

// recordingLink keeps, as JSON, everything an attempt's requests put into
// the workflow's history and what the workflow answered.
type recordingLink struct {
	link WorkflowLink
	mu   *sync.Mutex
	seen *[]string
}

func (l recordingLink) keep(name string, v any) {
	b, _ := json.Marshal(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.seen = append(*l.seen, name+" "+string(b))
}

func (l recordingLink) Update(ctx context.Context, name string, arg, result any) error {
	l.keep(name, arg)
	err := l.link.Update(ctx, name, arg, result)
	l.keep(name+" answered", result)
	return err
}

func (l recordingLink) Query(ctx context.Context, name string, arg, result any) error {
	l.keep(name, arg)
	err := l.link.Query(ctx, name, arg, result)
	l.keep(name+" answered", result)
	return err
}

func (l recordingLink) Signal(ctx context.Context, name string, arg any) error {
	l.keep(name, arg)
	return l.link.Signal(ctx, name, arg)
}

// An agent on a worker writes a secret of the worker's environment (a name
// that says so) and one the cuelist declares to its outputs, the board, a
// status report, a note to the person, a broadcast and a handoff context:
// what the workflow's history gets (the activities' inputs and results,
// the updates, signals and queries of the agents' requests) and what a
// follower mirrors (the workflow's log, its output lines, the board's
// values) hold [redacted:NAME], never the value; the agents that receive
// them on workers (the handoff's receiver, the broadcast's listener, the
// downstream cue through its inputs and the board) get the real values.
func TestSecretsMaskedInTheHistory(t *testing.T) {
	const token, phrase = "tok-secret-9876-abcd", "open-sesame-42"
	t.Setenv("SECRETS_TEST_TOKEN", token)
	t.Setenv("DEPLOY_PHRASE", phrase)
	root, path := repoRoot(t), "engine/temporal/testdata/secrets/cuelist.yaml"

	var mu sync.Mutex
	var seen []string
	env := newEnv()
	acts := &Activities{Root: root, Link: func(context.Context) WorkflowLink {
		return recordingLink{link: envLink{env}, mu: &mu, seen: &seen}
	}}
	t.Cleanup(acts.Close)
	RegisterWorkflow(env)
	RegisterActivities(env, acts)
	env.SetTestTimeout(2 * time.Minute)
	keep := func(what string, get func(*json.RawMessage) error) {
		var raw json.RawMessage
		if get(&raw) == nil {
			mu.Lock()
			seen = append(seen, what+" "+string(raw))
			mu.Unlock()
		}
	}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		keep(info.ActivityType.Name+" input", func(r *json.RawMessage) error { return args.Get(r) })
	})
	env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
		if result != nil {
			keep(info.ActivityType.Name+" result", func(r *json.RawMessage) error { return result.Get(r) })
		}
		if err != nil {
			mu.Lock()
			seen = append(seen, info.ActivityType.Name+" error "+err.Error())
			mu.Unlock()
		}
	})
	evs := completed(t, env, RunInput{RunID: testRunID("r-secrets"), Path: path, SpecHash: specHashOf(t, root, path)})

	// The agents that received the secrets got the real values.
	for cue, keys := range map[string][]string{"LEAK-100": {"handoff_real"}, "HEAR-100": {"real"}, "USE-100": {"inputs_real", "board_real", "snapshot_real"}} {
		out := outputsOf(t, evs, cue)
		for _, k := range keys {
			if out[k] != true {
				t.Errorf("%s: %s is %v, want true (outputs %v)", cue, k, out[k], out)
			}
		}
	}
	// What the history and the mirror hold: masked.
	var pages []EventsPage
	for after := int64(0); ; {
		v, err := env.QueryWorkflow(QueryEvents, after)
		var p EventsPage
		if err == nil {
			err = v.Get(&p)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) == 0 {
			break
		}
		pages = append(pages, p)
		after = p.Events[len(p.Events)-1].Seq
	}
	logged, _ := json.Marshal(pages)
	mu.Lock()
	history := strings.Join(seen, "\n")
	mu.Unlock()
	for what, text := range map[string]string{"the history": history, "the workflow's log": string(logged)} {
		for _, secret := range []string{token, phrase, "key-in-the-spec-5555"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds the secret %q:\n%s", what, secret, lineWith(text, secret))
			}
		}
		for _, mark := range []string{"[redacted:SECRETS_TEST_TOKEN]", "[redacted:DEPLOY_PHRASE]"} {
			if !strings.Contains(text, mark) {
				t.Errorf("%s has no %s", what, mark)
			}
		}
	}
	// Each way in is there, masked: outputs, the board, the report, the
	// note, the broadcast, the handoff context, the output line.
	for _, want := range []string{
		`"token":"[redacted:SECRETS_TEST_TOKEN]"`, `"phrase":"[redacted:DEPLOY_PHRASE]"`,
		`using [redacted:SECRETS_TEST_TOKEN]`, `deploying with [redacted:DEPLOY_PHRASE]`,
		`the phrase is [redacted:DEPLOY_PHRASE]`, `leaking [redacted:SECRETS_TEST_TOKEN]`,
		`"RECEIVER_API_KEY":"[redacted:RECEIVER_API_KEY]"`,
	} {
		if !strings.Contains(history+string(logged), want) {
			t.Errorf("nowhere in the history or the log: %s", want)
		}
	}
	for _, want := range []string{UpdateBBWrite, SignalReport, SignalUser, UpdateBroadcast, UpdateChild} {
		if !strings.Contains(history, "\n"+want+" ") {
			t.Errorf("no %s went to the workflow: the test does not cover it", want)
		}
	}
}

// lineWith is the line of text that holds s.
func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// echoLink is a workflow that answers every request with the value it is
// given and keeps what it was sent.
type echoLink struct {
	sent   []any
	answer any
}

func (l *echoLink) Update(_ context.Context, _ string, arg, result any) error {
	l.sent = append(l.sent, arg)
	b, _ := json.Marshal(l.answer)
	return json.Unmarshal(b, result)
}
func (l *echoLink) Query(ctx context.Context, name string, arg, result any) error {
	return l.Update(ctx, name, arg, result)
}
func (l *echoLink) Signal(_ context.Context, _ string, arg any) error {
	l.sent = append(l.sent, arg)
	return nil
}

// A question's text goes to the workflow masked, and its answer comes back
// with the secret put back; a value with no secret goes as it is.
func TestMaskedLinkMasksAndRestores(t *testing.T) {
	const secret = "pw-masked-link-77"
	t.Setenv("LINK_TEST_PASSWORD", secret)
	d := redactorFor(t)
	inner := &echoLink{answer: Asked{ID: "q1", Answer: "use [redacted:LINK_TEST_PASSWORD]"}}
	l := maskLink(inner, d)
	var got Asked
	if err := l.Update(context.Background(), UpdateAsk, Ask{Question: "may I use " + secret + "?"}, &got); err != nil {
		t.Fatal(err)
	}
	if q := inner.sent[0].(Ask).Question; q != "may I use [redacted:LINK_TEST_PASSWORD]?" {
		t.Errorf("the question as sent: %q", q)
	}
	if got.Answer != "use "+secret || got.ID != "q1" {
		t.Errorf("the answer as the agent gets it: %+v", got)
	}
	plain := Report{State: "working", Detail: "nothing secret"}
	if err := l.Signal(context.Background(), SignalReport, plain); err != nil {
		t.Fatal(err)
	}
	if inner.sent[1] != any(plain) {
		t.Errorf("a report without secrets was changed: %+v", inner.sent[1])
	}
	if err := maskLink(&failingLink{}, d).Update(context.Background(), UpdateAsk, Ask{}, &got); err == nil {
		t.Error("an error of the link was lost")
	}
}

type failingLink struct{ echoLink }

func (failingLink) Update(context.Context, string, any, any) error { return errors.New("unreachable") }

// redactorFor is a worker's redactor of its environment.
func redactorFor(t *testing.T) *redact.Redactor {
	t.Helper()
	d := redact.New(os.Environ(), nil)
	if d.None() {
		t.Fatal("no secret found in the environment")
	}
	return d
}
