package main

import (
	"slices"
	"testing"
)

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"one too long", 11, "one too lo…"},
		{"日本語のテキスト", 7, "日本語…"}, // wide characters: two columns each
		{"\x1b[31m✗\x1b[0m TEST failed", 8, "\x1b[31m✗\x1b[0m TEST …\x1b[0m"},
		{"anything", 0, "anything"},
	} {
		got := truncate(c.in, c.width)
		if got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
		if c.width > 0 && displayWidth(got) > c.width {
			t.Errorf("truncate(%q, %d) is %d columns wide", c.in, c.width, displayWidth(got))
		}
	}
}

// Agent output cannot move the cursor or recolour the terminal.
func TestPrintable(t *testing.T) {
	if got, want := printable("\x1b[2J\x1b[Hgone\tnow\r\x9b"), "^[[2J^[[Hgone now^M\uFFFD"; got != want {
		t.Errorf("printable = %q, want %q", got, want)
	}
	if got := printable("plain … text"); got != "plain … text" {
		t.Errorf("printable changed clean text: %q", got)
	}
}

func TestWrap(t *testing.T) {
	got := wrapIndented("  ship on friday anyway, with the known failure", 20)
	want := []string{"  ship on friday", "  anyway, with the", "  known failure"}
	if !slices.Equal(got, want) {
		t.Errorf("wrapIndented = %q, want %q", got, want)
	}
	for _, l := range wrap("a-very-long-word-without-any-space", 10) {
		if displayWidth(l) > 10 {
			t.Errorf("wrap left %q wider than 10", l)
		}
	}
}

// The prompt's line editor: typed characters (a UTF-8 character split
// between two reads too), Backspace, Ctrl-U, arrow keys ignored, Enter.
func TestLineEditor(t *testing.T) {
	var e lineEditor
	for _, chunk := range []string{"noo", "\x7f\x7f\x15yes, ", "\x1b[D\x1bOA", "\xc3", "\xa9t\xc3\xa9", "\rnext"} {
		if e.feed([]byte(chunk)) {
			break
		}
	}
	if !e.done || string(e.text) != "yes, été" || string(e.rest) != "next" {
		t.Errorf("editor: done %v, text %q, rest %q", e.done, string(e.text), e.rest)
	}
	var d lineEditor
	if !d.feed([]byte{0x04}) || !d.eof {
		t.Error("Ctrl-D on an empty line did not end it without an answer")
	}
}
