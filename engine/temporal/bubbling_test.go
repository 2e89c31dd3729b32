package temporal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// A child's question goes to its parent agent first, as locally: up-kid's
// first question is with up-lead, which answers it (the person's orch
// answer meanwhile is not used: a note says so); its second up-lead passes
// up (its own question, to the person), and the person's answer comes back
// down.
func TestChildQuestionsGoToTheParentAgent(t *testing.T) {
	root, path := repoRoot(t), "engine/temporal/testdata/bubbling/cuelist.yaml"
	env := realEnv(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	person := func() { // the person, answering what is asked
		l, done := envLink{env}, map[string]bool{}
		for ctx.Err() == nil {
			_ = l.call(ctx, nil, func(reply func(any, error)) {
				v, err := env.QueryWorkflow(QueryEvents, int64(0))
				var p EventsPage
				if err != nil || v.Get(&p) != nil {
					reply(nil, nil)
					return
				}
				for _, e := range p.Events {
					d, ok := e.Data.(record.QuestionData)
					if e.Type != record.EvQuestion || !ok || done[d.ID] {
						continue
					}
					switch {
					case d.Question == "Which colour?":
						env.SignalWorkflow(SignalAnswer, AnswerSignal{Question: d.ID, Answer: "red", By: "person"})
						env.SignalWorkflow(SignalBBSet, BBSetSignal{Key: "person-tried", Value: true, By: "test"})
						done[d.ID] = true
					case d.To == "person":
						env.SignalWorkflow(SignalAnswer, AnswerSignal{Question: d.ID, Answer: "round", By: "person"})
						done[d.ID] = true
					}
				}
				reply(nil, nil)
			})
			time.Sleep(50 * time.Millisecond)
		}
	}
	env.RegisterDelayedCallback(func() { go person() }, 0) // once the workflow runs
	evs := completed(t, env, RunInput{RunID: testRunID("r-bubbling"), Path: path, SpecHash: specHashOf(t, root, path)})
	b, _ := json.Marshal(outputsOf(t, evs, "ASKUP-100")["kid"])
	if string(b) != `{"colour":"blue","shape":"round"}` {
		t.Errorf("the child's answers: %s", b)
	}
	var got []string
	for _, e := range evs {
		switch d := e.Data.(type) {
		case record.QuestionData:
			got = append(got, e.Cue+" asks "+d.ID+" "+d.Question+" of "+d.To)
		case record.AnswerData:
			got = append(got, d.ID+" "+e.State+" by "+d.By+": "+d.Answer)
		}
		if e.Type == record.EvNote && strings.Contains(e.Reason, "orch answer") {
			got = append(got, "note: "+e.Reason)
		}
	}
	want := []string{
		"ASKUP-100/1 asks q1 Which colour? of up-lead",
		"note: orch answer q1: the question is with agent up-lead, which answers it (the person's answer is not used)",
		"q1 answered by up-lead: blue",
		"ASKUP-100/1 asks q2 Which shape? of up-lead",
		"ASKUP-100 asks q3 Which shape? of person",
		"q3 answered by person: round",
		"q2 answered by up-lead: round",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the questions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The lead is sent both questions and answers them (its own question's
	// answer comes to it from the person).
	m := strings.Join(messagesOf(evs, "ASKUP-100"), ",")
	if strings.Count(m, "out question.ask") != 2 || strings.Count(m, "in question.answer") != 2 || strings.Count(m, "out question.answer") != 1 {
		t.Errorf("the lead's messages: %v", m)
	}
}
