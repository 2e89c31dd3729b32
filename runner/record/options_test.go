package record

import (
	"strings"
	"testing"
)

func TestPickOption(t *testing.T) {
	claude := []QuestionOption{{ID: "allow_always", Name: "Always Allow"}, {ID: "allow", Name: "Allow"}, {ID: "reject", Name: "Reject"}}
	codex := []QuestionOption{{ID: "approved", Name: "Yes, proceed"}, {ID: "abort", Name: "No"}}
	for _, c := range []struct {
		options []QuestionOption
		answer  string
		want    int    // -1: an error
		err     string // in the error
	}{
		{codex, "1", 0, ""},
		{codex, " 2 ", 1, ""},
		{codex, "Yes, proceed", 0, ""},
		{codex, "yes, PROCEED", 0, ""},
		{codex, "abort", 1, ""},
		{codex, "Yes", 0, ""}, // a prefix only one option has
		{codex, "app", 0, ""}, // of its id too
		{codex, "n", 1, ""},   // "No"
		{codex, "a", -1, `could be any of options 1 (Yes, proceed), 2 (No)`},
		{codex, "3", -1, `names none of the options`},
		{codex, "maybe", -1, "names none of the options; answer with an option's number, id or name (or the start of one):\n  1) Yes, proceed (id approved)\n  2) No (id abort)"},
		{codex, "", -1, "names none"},
		{claude, "allow", 1, ""},  // exactly Allow, though Always Allow starts alike
		{claude, "always", 0, ""}, // Always Allow
		{claude, "al", -1, "could be any of options 1 (Always Allow), 2 (Allow)"},
		{claude, "r", 2, ""},
		{nil, "anything at all", -1, ""}, // no options: any answer
	} {
		got, err := PickOption(c.options, c.answer)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %d, %v; want %d", c.answer, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %d, %v; want an error with %q", c.answer, got, err, c.err)
		}
	}
}
