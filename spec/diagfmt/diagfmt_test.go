package diagfmt

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/spec"
)

var update = flag.Bool("update", false, "rewrite golden files")

type fakeSources map[string][]string

func (f fakeSources) SourceLine(file string, line int) string {
	lines := f[file]
	if line < 1 || line > len(lines) {
		return ""
	}
	return lines[line-1]
}

var sources = fakeSources{
	"specs/cuelist.yaml": {
		"cuelist:",
		"  id: release",
		"  cues:",
		"    - id: CUE-100",
		"      dependecies: [CUE-300]",
		"      agents: [build, \"tset\"]",
		"\tdefaults: {ack_timeout: 5 seconds}",
	},
	"dir with space/a,b:c.yaml": {"agent:", "  id: caf\u00e9-\u00fcber", "  description: 100%\r"},
}

var diags = spec.Diagnostics{
	{Severity: spec.Error, Pos: spec.Pos{File: "specs/cuelist.yaml", Line: 5, Col: 7}, Path: "/cuelist/cues/0/dependecies", Code: "unknown-field", Message: `unknown field "dependecies" in cue CUE-100 (did you mean "dependencies"?)`},
	{Severity: spec.Error, Pos: spec.Pos{File: "specs/cuelist.yaml", Line: 6, Col: 23}, Path: "/cuelist/cues/0/agents/1", Code: "unknown-agent", Message: `cue CUE-100 names unknown agent "tset"`},
	{Severity: spec.Error, Pos: spec.Pos{File: "specs/cuelist.yaml", Line: 7, Col: 26}, Path: "/cuelist/defaults/ack_timeout", Code: "bad-duration", Message: `ack_timeout: "5 seconds" is not a duration`},
	{Severity: spec.Warning, Pos: spec.Pos{File: "dir with space/a,b:c.yaml", Line: 2, Col: 7}, Path: "/agent/id", Code: "unused-field", Message: "line one\nline two: 100% sure, really"},
	{Severity: spec.Warning, Pos: spec.Pos{File: "empty.yaml", Line: 1, Col: 1}, Code: "empty-file", Message: "file holds no document"},
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"text.txt", func(b *bytes.Buffer) error { return Text(b, diags, sources, TextOptions{Files: 3}) }},
		{"text-color.txt", func(b *bytes.Buffer) error { return Text(b, diags, sources, TextOptions{Color: true, Files: 3}) }},
		{"text-clean.txt", func(b *bytes.Buffer) error { return Text(b, nil, sources, TextOptions{Files: 1}) }},
		{"diagnostics.json", func(b *bytes.Buffer) error { return JSON(b, diags) }},
		{"clean.json", func(b *bytes.Buffer) error { return JSON(b, nil) }},
		{"github.txt", func(b *bytes.Buffer) error { return GitHub(b, diags, 3) }},
		{"diagnostics.sarif", func(b *bytes.Buffer) error { return SARIF(b, diags, "v1.0.0") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

// TestJSONShape pins the exact keys of docs/design.md#diagnostics.
func TestJSONShape(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, diags); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out["valid"] != false {
		t.Fatalf("top level = %v", out)
	}
	first := out["diagnostics"].([]any)[0].(map[string]any)
	for _, k := range []string{"file", "line", "column", "severity", "code", "path", "message"} {
		if _, ok := first[k]; !ok {
			t.Errorf("diagnostic lacks %q", k)
		}
	}
	if len(first) != 7 {
		t.Errorf("diagnostic has extra keys: %v", first)
	}
}

func TestGitHubEscaping(t *testing.T) {
	var b bytes.Buffer
	_ = GitHub(&b, diags[3:4], 1)
	line := strings.SplitN(b.String(), "\n", 2)[0]
	want := "::warning file=dir with space/a%2Cb%3Ac.yaml,line=2,col=7::line one%0Aline two: 100%25 sure, really [unused-field]"
	if line != want {
		t.Errorf("got  %s\nwant %s", line, want)
	}
}

// TestSARIFRequiredFields checks what GitHub code scanning requires of an upload.
func TestSARIFRequiredFields(t *testing.T) {
	var b bytes.Buffer
	_ = SARIF(&b, diags, "v1")
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					Physical struct {
						Artifact struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "orch" {
		t.Fatalf("bad log header: %+v", log)
	}
	run := log.Runs[0]
	if len(run.Results) != len(diags) {
		t.Fatalf("%d results, want %d", len(run.Results), len(diags))
	}
	for _, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("ruleIndex %d does not point at %s", r.RuleIndex, r.RuleID)
		}
		loc := r.Locations[0].Physical
		if loc.Artifact.URI == "" || loc.Region.StartLine < 1 || r.Message.Text == "" {
			t.Errorf("incomplete result %+v", r)
		}
		if strings.ContainsAny(loc.Artifact.URI, " ,") {
			t.Errorf("uri %q is not escaped", loc.Artifact.URI)
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("a", 300) + "X" + strings.Repeat("b", 300)
	shown, marker := excerpt(long, 301)
	caretAt := strings.Index(marker, "^")
	if got := []rune(shown)[caretAt]; got != 'X' {
		t.Errorf("caret points at %q, want X", got)
	}
	if len([]rune(shown)) > maxExcerpt+6 {
		t.Errorf("excerpt is %d runes long", len([]rune(shown)))
	}
	shown, marker = excerpt("  id: caf\u00e9 x", 7)
	if shown != "  id: caf\u00e9 x" || marker != "      ^~~~~~" {
		t.Errorf("got %q / %q", shown, marker)
	}
}
