package temporal

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// A child's notices reach its parent agent as the parent's notify.mode
// says, as locally: at once (immediate), as one summary when the child
// ends (summary), or not at all (silent); the person's orch notify-mode
// for a cue wins over its agent's own choice. Every message is in the
// run's log whatever the mode.
func TestNotifyModesOnWorkers(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/notify/cuelist.yaml"
	env := realEnv(t, root)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalNotifyMode, NotifyModeSignal{Cue: "PERSON-100", Mode: "silent"}) }, 0)
	evs := completed(t, env, RunInput{RunID: testRunID("r-notify"), Path: path, SpecHash: specHashOf(t, root, path)})
	for cue, want := range map[string]string{
		"IMM-100":    "[message.user: one message.user: two]",
		"SUM-100":    "[summary of SUM-100/1: one, two]",
		"SIL-100":    "[]",
		"PERSON-100": "[]",
	} {
		if got := fmt.Sprint(outputsOf(t, evs, cue)["notices"]); got != want {
			t.Errorf("%s's notices: %s, want %s", cue, got, want)
		}
	}
	var shown, notes []string
	for _, e := range evs {
		if d, ok := e.Data.(record.UserMessageData); ok && e.Type == record.EvUserMessage {
			shown = append(shown, e.Cue+" "+d.Kind+" "+string(d.Body))
		}
		if e.Type == record.EvNote && strings.HasPrefix(e.Reason, "orch notify-mode") {
			notes = append(notes, e.Reason)
		}
	}
	all := strings.Join(shown, "\n")
	for _, cue := range []string{"IMM-100", "SUM-100", "SIL-100", "PERSON-100"} {
		if strings.Count(all, cue+"/1 message ") != 2 || !strings.Contains(all, cue+" notify-mode ") {
			t.Errorf("%s: the log lacks its child's messages or its mode:\n%s", cue, all)
		}
	}
	if strings.Join(notes, "\n") != "orch notify-mode: notices reach parents not at all (silent) in cue PERSON-100 and everything under it" {
		t.Errorf("notes: %q", notes)
	}
}
