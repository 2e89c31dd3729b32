package spec

import "testing"

// TestLoneCRLineEnds checks that a file whose lines end with a CR alone gets
// the positions yaml.v3 gives it, whichever check reports: every count of
// lines goes through one function.
func TestLoneCRLineEnds(t *testing.T) {
	tests := []struct{ data, want string }{
		{"agent:\r  id: a\r  command: [x]\r  run: echo hello\x00\r",
			"cr.yaml:4:18: error: control character U+0000 (NUL) is not allowed in YAML [control-character]"},
		{"agent:\r\n  id: a\r  command: [x]\n  run: \xff\r",
			"cr.yaml:4:8: error: invalid UTF-8 (byte 0xff); spec files must be UTF-8 text [invalid-utf8]"},
		{"agent:\r  id: a\r  command: [x]\r  env: {k: *nope}\r",
			"cr.yaml:4:12: error: invalid YAML: unknown anchor 'nope' referenced [yaml-syntax]"},
	}
	for _, tt := range tests {
		l := &loader{opts: LoadOptions{MaxFileSize: DefaultMaxFileSize}, set: &Set{}, seen: map[string]bool{}, noIncludes: true}
		f := &File{Name: "cr.yaml"}
		l.loadData(f, []byte(tt.data))
		if len(l.diags) != 1 || l.diags[0].String() != tt.want {
			t.Errorf("%q: diagnostics %v, want %s", tt.data, l.diags, tt.want)
			continue
		}
		if f.Lines() != 5 || f.Line(4) == "" {
			t.Errorf("%q: %d lines, line 4 %q", tt.data, f.Lines(), f.Line(4))
		}
	}
}
