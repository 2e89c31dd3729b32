package temporal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// A message between tasks is told to whoever oversees it, as locally: a
// message between siblings (note-a to note-b, both the lead's children) to
// their parent, the lead, as a message.notice with the body; a message
// between tasks further apart (note-c, under note-a, to note-b) to their
// nearest common ancestor (the lead), routed; a message to another cue's
// task (note-c to OTHER-100) to the person, routed, in the run's log. Before,
// every message was told to the person alone.
func TestMessageNoticesOnWorkers(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/notices/cuelist.yaml"
	evs := completed(t, realEnv(t, root), RunInput{RunID: testRunID("r-notices"), Path: path, SpecHash: specHashOf(t, root, path)})
	b, _ := json.Marshal(outputsOf(t, evs, "NOTE-100")["notices"])
	want := `["note-a-\u003enote-b -\u003e routed=False from a","note-c-\u003enote-b NOTE-100/1/1-\u003eNOTE-100/2 routed=True from c"]`
	if string(b) != want {
		t.Errorf("the lead's notices:\n%s\nwant:\n%s", b, want)
	}
	if h := outputsOf(t, evs, "OTHER-100")["heard"]; fmt.Sprint(h) != "[from c]" {
		t.Errorf("OTHER-100 heard %v", h)
	}
	var person []string
	for _, e := range evs {
		if e.Type != record.EvUserMessage {
			continue
		}
		d, _ := e.Data.(record.UserMessageData)
		person = append(person, fmt.Sprintf("%s %s %s->%s %s->%s routed=%v %s", e.Cue, d.Kind, d.From, d.To, d.FromTask, d.ToTask, d.Routed, d.Body))
	}
	wantPerson := `NOTE-100/1/1 notice note-c->note-other NOTE-100/1/1->OTHER-100 routed=true {"text":"from c"}`
	if strings.Join(person, "\n") != wantPerson {
		t.Errorf("the person was told:\n%s\nwant:\n%s", strings.Join(person, "\n"), wantPerson)
	}
}
