// Package diagfmt renders spec diagnostics for people and for machines: text
// with the source line and a caret, JSON (docs/design.md#diagnostics), GitHub Actions workflow
// commands and SARIF 2.1.0 for code scanning. Finding problems is spec's job;
// showing them is this package's.
package diagfmt

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/orch-cli/orch/spec"
)

// Formats lists the output formats of `orch validate`.
var Formats = []string{"text", "json", "github", "sarif"}

// Sources gives the text of a line of a loaded file, for the text format.
type Sources interface {
	SourceLine(file string, line int) string
}

// TextOptions tune the text format.
type TextOptions struct {
	Color bool // ANSI colour: only on a terminal, never with NO_COLOR
	Files int  // files checked, for the summary line
}

const (
	bold   = "\x1b[1m"
	red    = "\x1b[1;31m"
	yellow = "\x1b[1;33m"
	green  = "\x1b[32m"
	dim    = "\x1b[2m"
	reset  = "\x1b[0m"
)

// Text writes "file:line:col: error: message [code]", the source line with a
// caret under the column, and a summary line.
func Text(w io.Writer, ds spec.Diagnostics, src Sources, opts TextOptions) error {
	paint := func(code, s string) string {
		if !opts.Color {
			return s
		}
		return code + s + reset
	}
	var b strings.Builder
	for _, d := range ds {
		sev := paint(red, "error")
		if d.Severity == spec.Warning {
			sev = paint(yellow, "warning")
		}
		fmt.Fprintf(&b, "%s: %s: %s %s\n", paint(bold, d.Pos.String()), sev, d.Message, paint(dim, "["+d.Code+"]"))
		if d.Pos.Line > 0 && src != nil {
			line := src.SourceLine(d.Pos.File, d.Pos.Line)
			if strings.TrimSpace(line) != "" {
				shown, marker := excerpt(line, d.Pos.Col)
				num := fmt.Sprint(d.Pos.Line)
				pad := strings.Repeat(" ", len(num))
				fmt.Fprintf(&b, " %s | %s\n", num, shown)
				fmt.Fprintf(&b, " %s | %s\n", pad, paint(green, marker))
			}
		}
	}
	b.WriteString(Summary(ds, opts.Files))
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is the last line of the text format.
func Summary(ds spec.Diagnostics, files int) string {
	errs, warns := ds.Count()
	where := plural(files, "file")
	if errs == 0 && warns == 0 {
		return fmt.Sprintf("%s valid, no problems", where)
	}
	verdict := "valid"
	if errs > 0 {
		verdict = "invalid"
	}
	return fmt.Sprintf("%s, %s in %s: %s", plural(errs, "error"), plural(warns, "warning"), where, verdict)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// printable shows a source line safely, one character per rune so the caret
// lines up: tabs as single spaces, control characters and invalid UTF-8 as
// U+FFFD (a terminal must never receive raw control bytes from a spec).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError:
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}

// maxExcerpt is the widest source excerpt shown; longer lines are cut around
// the column, with "..." where text was left out.
const maxExcerpt = 100

// excerpt returns the printable source line (cut to maxExcerpt runes around col)
// and the caret line under it.
func excerpt(line string, col int) (shown, marker string) {
	runes := []rune(printable(line))
	col = min(max(col, 1), len(runes)+1)
	width := tokenWidth(runes[col-1:])
	if len(runes) <= maxExcerpt {
		return string(runes), strings.Repeat(" ", col-1) + "^" + strings.Repeat("~", max(width-1, 0))
	}
	start := max(col-1-maxExcerpt/2, 0)
	end := min(start+maxExcerpt, len(runes))
	prefix, suffix := "", ""
	if start > 0 {
		prefix = "..."
	}
	if end < len(runes) {
		suffix = "..."
	}
	width = min(width, end-(col-1))
	offset := len(prefix) + col - 1 - start
	return prefix + string(runes[start:end]) + suffix, strings.Repeat(" ", offset) + "^" + strings.Repeat("~", max(width-1, 0))
}

// tokenWidth is the length of the YAML token at the start of rs: a quoted
// string with its quotes, or a plain scalar up to a flow separator (", ] }"),
// a ": " or a " #" comment.
func tokenWidth(rs []rune) int {
	if len(rs) == 0 {
		return 1
	}
	if rs[0] == '[' || rs[0] == '{' {
		return 1 // a flow collection: mark its opening bracket
	}
	if q := rs[0]; q == '"' || q == '\'' {
		for i := 1; i < len(rs); i++ {
			if rs[i] == q && (q == '\'' || rs[i-1] != '\\') {
				return i + 1
			}
		}
		return len(rs)
	}
	end := len(rs)
loop:
	for i, r := range rs {
		switch {
		case r == ',' || r == ']' || r == '}':
			end = i
			break loop
		case r == ':' && (i+1 == len(rs) || rs[i+1] == ' '):
			end = i
			break loop
		case r == '#' && i > 0 && rs[i-1] == ' ':
			end = i
			break loop
		}
	}
	for end > 1 && rs[end-1] == ' ' {
		end--
	}
	return max(end, 1)
}

// JSON writes {"valid": bool, "diagnostics": [...]} (docs/design.md#diagnostics).
func JSON(w io.Writer, ds spec.Diagnostics) error {
	type item struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
		Severity string `json:"severity"`
		Code     string `json:"code"`
		Path     string `json:"path"`
		Message  string `json:"message"`
	}
	out := struct {
		Valid       bool   `json:"valid"`
		Diagnostics []item `json:"diagnostics"`
	}{Valid: !ds.HasErrors(), Diagnostics: []item{}}
	for _, d := range ds {
		out.Diagnostics = append(out.Diagnostics, item{d.Pos.File, d.Pos.Line, d.Pos.Col, d.Severity.String(), d.Code, d.Path, d.Message})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// GitHub writes GitHub Actions workflow commands (::error file=…,line=…,col=…::…),
// which show up as annotations on the pull request.
func GitHub(w io.Writer, ds spec.Diagnostics, files int) error {
	var b strings.Builder
	for _, d := range ds {
		cmd := "error"
		if d.Severity == spec.Warning {
			cmd = "warning"
		}
		fmt.Fprintf(&b, "::%s file=%s,line=%d,col=%d::%s\n", cmd, escapeProperty(d.Pos.File), d.Pos.Line, d.Pos.Col,
			escapeData(d.Message+" ["+d.Code+"]"))
	}
	b.WriteString(Summary(ds, files))
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeData and escapeProperty follow the escaping of @actions/core's command.ts.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
