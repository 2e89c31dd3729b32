package spec

import (
	"fmt"
	"sort"
)

// Severity says whether a diagnostic makes the specs invalid.
type Severity int

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Pos is a place in a spec file. Line and Col are 1-based; Col counts runes,
// as yaml.v3 does. A zero Line means "the file as a whole".
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Diagnostic is one problem found in the specs: where (a position and the JSON
// pointer into its document), how bad, a stable code and a message for people.
type Diagnostic struct {
	Severity Severity
	Pos      Pos
	Path     string // JSON pointer into the document ("" for the file or document itself)
	Code     string // stable, kebab-case: "unknown-field", "cycle", ...
	Message  string
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s [%s]", d.Pos, d.Severity, d.Message, d.Code)
}

// Diagnostics is a list of problems. The zero value is ready to use.
type Diagnostics []Diagnostic

// Add appends a diagnostic.
func (ds *Diagnostics) Add(sev Severity, pos Pos, path, code, format string, args ...any) {
	*ds = append(*ds, Diagnostic{Severity: sev, Pos: pos, Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Count returns the number of errors and warnings.
func (ds Diagnostics) Count() (errors, warnings int) {
	for _, d := range ds {
		if d.Severity == Error {
			errors++
		} else {
			warnings++
		}
	}
	return errors, warnings
}

// Strict returns a copy in which every warning is an error.
func (ds Diagnostics) Strict() Diagnostics {
	out := make(Diagnostics, len(ds))
	for i, d := range ds {
		d.Severity = Error
		out[i] = d
	}
	return out
}

// Sorted returns the diagnostics ordered by file, line, column, then severity,
// code and message, with exact duplicates removed, so output is identical from
// run to run whatever order the checks ran in.
func (ds Diagnostics) Sorted() Diagnostics {
	out := append(Diagnostics(nil), ds...)
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	uniq := out[:0]
	for i, d := range out {
		if i > 0 && d == out[i-1] {
			continue
		}
		uniq = append(uniq, d)
	}
	return uniq
}

func less(a, b Diagnostic) bool {
	if a.Pos.File != b.Pos.File {
		return a.Pos.File < b.Pos.File
	}
	if a.Pos.Line != b.Pos.Line {
		return a.Pos.Line < b.Pos.Line
	}
	if a.Pos.Col != b.Pos.Col {
		return a.Pos.Col < b.Pos.Col
	}
	if a.Severity != b.Severity {
		return a.Severity < b.Severity
	}
	if a.Code != b.Code {
		return a.Code < b.Code
	}
	if a.Message != b.Message {
		return a.Message < b.Message
	}
	return a.Path < b.Path
}
