package record

import (
	"fmt"
	"strconv"
	"strings"
)

// QuestionOption is one of the answers a question offers, as its asker gave
// it (an ACP permission request's options).
type QuestionOption struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"` // allow_once, allow_always, reject_once, reject_always
}

// PickOption is the one check of an answer to a question with options,
// wherever the answer is given (orch answer, the terminal prompt, the web
// inbox, the HTTP API) and again where it is delivered: the option the
// answer names by its number (1, 2, ...), its id or its name, whatever the
// case, or by the start of one of them that only that option has. An
// answer that names no option, or could name several, is an error that
// lists the options. A question without options takes any answer (-1).
func PickOption(options []QuestionOption, answer string) (int, error) {
	if len(options) == 0 {
		return -1, nil
	}
	a := strings.ToLower(strings.TrimSpace(answer))
	if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(options) {
		return n - 1, nil
	}
	for i, o := range options {
		if a == strings.ToLower(o.ID) || a == strings.ToLower(o.Name) {
			return i, nil
		}
	}
	var matches []int
	for i, o := range options {
		if a != "" && (strings.HasPrefix(strings.ToLower(o.ID), a) || strings.HasPrefix(strings.ToLower(o.Name), a)) {
			matches = append(matches, i)
		}
	}
	if len(matches) == 1 {
		return matches[0], nil
	}
	var b strings.Builder
	if len(matches) > 1 {
		fmt.Fprintf(&b, "the answer %q could be any of options ", answer)
		for k, i := range matches {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d (%s)", i+1, options[i].Name)
		}
	} else {
		fmt.Fprintf(&b, "the answer %q names none of the options", answer)
	}
	b.WriteString("; answer with an option's number, id or name (or the start of one):")
	for i, o := range options {
		fmt.Fprintf(&b, "\n  %d) %s", i+1, o.Name)
		if o.ID != o.Name {
			fmt.Fprintf(&b, " (id %s)", o.ID)
		}
	}
	return -1, fmt.Errorf("%s", b.String())
}

// NamedOptions are the options of a question that names its answers
// (question.ask's options, the ask tool's): numbered from 1.
func NamedOptions(names []string) []QuestionOption {
	var options []QuestionOption
	for i, o := range names {
		options = append(options, QuestionOption{ID: strconv.Itoa(i + 1), Name: o})
	}
	return options
}

// Picked is an answer as its asker gets it: the name of the option it
// names, or the answer itself (a question without options).
func Picked(options []QuestionOption, answer string) string {
	if i, err := PickOption(options, answer); err == nil && i >= 0 {
		return options[i].Name
	}
	return answer
}
