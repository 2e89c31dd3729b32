package spec

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	goccy "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
)

// checkText reports the first byte sequence that cannot be YAML text: invalid
// UTF-8 or a control character such as NUL. yaml.v3 would say so without a
// column; we say exactly where.
func checkText(f *File, diags *Diagnostics) bool {
	line, col := 1, 1
	data := f.Data
	for i := 0; i < len(data); {
		b := data[i]
		if b < utf8.RuneSelf {
			if b < 0x20 && b != '\t' && b != '\n' && b != '\r' || b == 0x7f {
				diags.Add(Error, Pos{File: f.Name, Line: line, Col: col}, "", "control-character",
					"control character %s is not allowed in YAML", runeName(rune(b)))
				return false
			}
			if n := lineBreak(data, i); n > 0 {
				line, col = line+1, 1
				i += n
				continue
			}
			col++
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			diags.Add(Error, Pos{File: f.Name, Line: line, Col: col}, "", "invalid-utf8",
				"invalid UTF-8 (byte 0x%02x); spec files must be UTF-8 text", b)
			return false
		}
		if r >= 0x80 && r <= 0x9f && r != 0x85 || r == 0xfffe || r == 0xffff {
			diags.Add(Error, Pos{File: f.Name, Line: line, Col: col}, "", "control-character",
				"character %s is not allowed in YAML", runeName(r))
			return false
		}
		col++
		i += size
	}
	return true
}

func runeName(r rune) string {
	if r == 0 {
		return "U+0000 (NUL)"
	}
	return fmt.Sprintf("U+%04X", r)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxDiagnostic turns a yaml.v3 parse error into a diagnostic. yaml.v3 gives
// no column, and for parser errors the line is where the enclosing construct
// began, so the error is located a second time with goccy/go-yaml, whose
// syntax errors carry the position of the offending token. The later of the two
// lines wins: the real problem is never before the construct it breaks.
func syntaxDiagnostic(f *File, err error) Diagnostic {
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	col := 0
	if len(f.Data) <= maxLocateSize && roughDepth(f.Data) <= maxLocateDepth { // else yaml.v3's line stands
		if gl, gc, gmsg, ok := locateSyntaxError(f.Data); ok && gl >= line {
			line, col, msg = gl, gc, gmsg
		}
	}
	if m := unknownAnchorRE.FindStringSubmatch(msg); m != nil && line == 0 {
		line, col = findText(f.Data, "*"+m[1])
	}
	if line == 0 {
		line = 1
	}
	if col == 0 {
		col = guessColumn(f.Line(line), msg)
	}
	msg = strings.NewReplacer("\t", `\t`, "\n", `\n`).Replace(msg)
	return Diagnostic{Severity: Error, Pos: Pos{File: f.Name, Line: line, Col: col}, Code: "yaml-syntax", Message: "invalid YAML: " + msg}
}

// goccy/go-yaml is only asked to locate a syntax error in files it parses
// quickly. Its cost grows with the square of the depth (at 1,000 levels a few
// milliseconds and megabytes, at 10,000 a quarter of a second and 160 MB, at
// 100,000 gigabytes), and it takes 6 s on an 8 MB file; real specs are a few
// kilobytes, a 10,000-cue cuelist a megabyte.
const (
	maxLocateDepth = 1000
	maxLocateSize  = 2 << 20
)

var unknownAnchorRE = regexp.MustCompile(`unknown anchor '([^']*)' referenced`)

// locateSyntaxError asks goccy/go-yaml where the syntax error is.
func locateSyntaxError(data []byte) (line, col int, msg string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, err := goccyparser.ParseBytes(data, 0)
	var se *goccy.SyntaxError
	if !errors.As(err, &se) || se.Token == nil || se.Token.Position == nil {
		return 0, 0, "", false
	}
	return se.Token.Position.Line, se.Token.Position.Column, se.Message, se.Token.Position.Line > 0
}

// findText returns the 1-based line and rune column of the first occurrence of s.
func findText(data []byte, s string) (line, col int) {
	i := strings.Index(string(data), s)
	if i < 0 {
		return 0, 0
	}
	line, start := 1, 0
	for j := 0; j < i; j++ {
		if n := lineBreak(data, j); n > 0 {
			j += n - 1
			line, start = line+1, j+1
		}
	}
	return line, utf8.RuneCount(data[start:i]) + 1
}

func guessColumn(text, msg string) int {
	idx := -1
	switch {
	case strings.Contains(msg, "mapping values are not allowed"):
		// The second ": " on the line is the one YAML did not expect.
		if first := strings.Index(text, ": "); first >= 0 {
			if second := strings.Index(text[first+2:], ": "); second >= 0 {
				idx = first + 2 + second
			} else {
				idx = first
			}
		}
	case strings.Contains(msg, "cannot start any token"):
		idx = strings.IndexAny(text, "\t@`%")
	case strings.Contains(msg, "tab character"):
		idx = strings.IndexByte(text, '\t')
	}
	if idx < 0 {
		idx = len(text) - len(strings.TrimLeft(text, " \t"))
	}
	return utf8.RuneCountInString(text[:idx]) + 1
}
