package main

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// runeWidth is the number of terminal columns r takes: 0 for combining
// marks and format characters, 2 for the wide East Asian and emoji ranges,
// else 1. An approximation of wcwidth good enough to keep lines inside the
// terminal.
func runeWidth(r rune) int {
	switch {
	case r == 0, unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF && r != 0x303F,
		r >= 0xAC00 && r <= 0xD7A3, r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F,
		r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F300 && r <= 0x1F64F, r >= 0x1F900 && r <= 0x1F9FF, r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}

// displayWidth is the number of columns s takes, escape sequences (colour)
// excluded.
func displayWidth(s string) int {
	w := 0
	for i := 0; i < len(s); {
		if n := escapeLen(s[i:]); n > 0 {
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w += runeWidth(r)
		i += size
	}
	return w
}

// escapeLen is the length of the CSI sequence (ESC [ ... final byte) s
// starts with, or 0.
func escapeLen(s string) int {
	if len(s) < 2 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		if s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
	}
	return len(s)
}

// truncate cuts s to at most width columns, ending it with … when it was
// cut. Colour sequences are kept (and reset after a cut). width <= 0: no
// limit.
func truncate(s string, width int) string {
	if width <= 0 || displayWidth(s) <= width {
		return s
	}
	var b strings.Builder
	w, coloured := 0, false
	for i := 0; i < len(s); {
		if n := escapeLen(s[i:]); n > 0 {
			b.WriteString(s[i : i+n])
			coloured = true
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if w+runeWidth(r) > width-1 {
			break
		}
		b.WriteRune(r)
		w += runeWidth(r)
		i += size
	}
	b.WriteString("…")
	if coloured {
		b.WriteString("\x1b[0m")
	}
	return b.String()
}

// printable makes a line of agent output safe to show: control characters
// (escape sequences that would move the cursor or recolour the terminal)
// are shown as ^X, a tab as a space.
func printable(s string) string { return escapeControls(s, " ") }

// terminalSafe is printable keeping tabs, for whole lines (orch logs).
func terminalSafe(s string) string { return escapeControls(s, "\t") }

func escapeControls(s, tab string) string {
	clean := true
	for _, r := range s {
		if (r < 0x20 && (r != '\t' || tab != "\t")) || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString(tab)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		case r >= 0x80 && r < 0xa0, r == utf8.RuneError:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// wrap breaks s into lines of at most width columns, at spaces where it
// can. width <= 0: one line.
func wrap(s string, width int) []string {
	if width <= 0 || displayWidth(s) <= width {
		return []string{s}
	}
	var lines []string
	var line strings.Builder
	w := 0
	flush := func() {
		lines = append(lines, strings.TrimRight(line.String(), " "))
		line.Reset()
		w = 0
	}
	for _, word := range strings.SplitAfter(s, " ") {
		ww := displayWidth(word)
		if w > 0 && w+displayWidth(strings.TrimRight(word, " ")) > width {
			flush()
		}
		for ww > width { // a word longer than a line: cut it
			head := truncateRunes(word, width-w)
			line.WriteString(head)
			flush()
			word = word[len(head):]
			ww = displayWidth(word)
		}
		line.WriteString(word)
		w += ww
	}
	if line.Len() > 0 {
		flush()
	}
	return lines
}

// wrapIndented wraps s keeping its leading spaces before every line.
func wrapIndented(s string, width int) []string {
	body := strings.TrimLeft(s, " ")
	indent := s[:len(s)-len(body)]
	if width <= 0 || len(indent) >= width/2 {
		return wrap(s, width)
	}
	lines := wrap(body, width-len(indent))
	for i := range lines {
		lines[i] = indent + lines[i]
	}
	return lines
}

// truncateRunes is the longest prefix of s at most width columns wide
// (at least one rune, so that wrap always moves on).
func truncateRunes(s string, width int) string {
	w := 0
	for i, r := range s {
		if w+runeWidth(r) > width && i > 0 {
			return s[:i]
		}
		w += runeWidth(r)
	}
	return s
}
