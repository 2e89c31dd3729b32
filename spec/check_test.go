package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

func TestDataFlow(t *testing.T) {
	agents := `agent: {id: src, command: [x], provides: [a, b]}
---
agent: {id: mid, command: [x], requires: [a], provides: [c]}
---
agent: {id: sink, command: [x], requires: [a, b, c, p]}
---
agent: {id: needy, command: [x], requires: [z]}
`
	tests := []struct {
		name string
		cues string
		want []string
	}{
		{"transitive ancestors supply", `
    - {id: S, agents: [src]}
    - {id: M, agents: [mid], dependencies: [S]}
    - {id: K, agents: [sink], dependencies: [M]}`, nil},
		{"auto_follow is an edge", `
    - {id: S, agents: [src], auto_follow: M}
    - {id: M, agents: [mid], auto_follow: K}
    - {id: K, agents: [sink]}`, nil},
		{"a sibling does not supply", `
    - {id: S, agents: [src]}
    - {id: M, agents: [mid]}
    - {id: K, agents: [sink], dependencies: [S]}`, []string{
			`f.yaml:3:24: error: agent "mid" requires "a", which cue M does not receive: not in the cue's or the cuelist's inputs, and no agent of an earlier cue provides it [missing-input]`,
			`f.yaml:4:24: error: agent "sink" requires "c", which cue K does not receive: not in the cue's or the cuelist's inputs, and no agent of an earlier cue provides it [missing-input]`}},
		{"cue inputs supply", `
    - {id: N, agents: [needy], inputs: {z: 1}}`, nil},
		{"the cue's own agents do not supply", `
    - {id: N, agents: [src, mid]}`, []string{
			`f.yaml:2:29: error: agent "mid" requires "a", which cue N does not receive: not in the cue's or the cuelist's inputs, and no agent of an earlier cue provides it [missing-input]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree(t, map[string]string{
				"a.yaml": agents,
				"f.yaml": "cuelist:\n  id: f\n  inputs: {p: 1}\n  cues:" + tt.cues + "\n",
			})
			// positions in the table count from the cues block: shift them.
			_, got := validate(t, "a.yaml", "f.yaml")
			expectDiags(t, shiftLines(got, 3), tt.want...)
		})
	}
}

// shiftLines renumbers f.yaml diagnostics so table positions count from "cues:".
func shiftLines(diags []string, by int) []string {
	var out []string
	for _, d := range diags {
		if rest, ok := strings.CutPrefix(d, "f.yaml:"); ok {
			var line int
			n := 0
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				line = line*10 + int(rest[n]-'0')
				n++
			}
			d = "f.yaml:" + itoa(line-by) + rest[n:]
		}
		out = append(out, d)
	}
	return out
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestHandoffProblems(t *testing.T) {
	dir := t.TempDir()
	content := []byte("print('hi')\n")
	if err := os.WriteFile(dir+"/f.py", content, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	good := "sha256:" + hex.EncodeToString(sum[:])
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	from := &Agent{ID: "lead", HandoffTo: []string{"helper"}}
	helper := &Agent{ID: "helper", Requires: []string{"task_description", "plan"}}
	art := func(p, h string) map[string]any {
		return map[string]any{"task_description": "t", "plan": "p", "artifacts_produced": []any{map[string]any{"path": p, "hash": h}}}
	}
	tests := []struct {
		name string
		to   string
		ctx  map[string]any
		root *os.Root
		want []string
	}{
		{"accepted", "helper", art("f.py", good), root, nil},
		{"not allowed", "other", map[string]any{}, nil, []string{`handoff-not-allowed: agent "lead" may not hand off to "other": not in its handoff_to (it allows "helper")`}},
		{"missing requires named", "helper", map[string]any{}, nil, []string{`missing-context: handoff_context lacks "plan", "task_description", which "helper" requires`}},
		{"absolute path", "helper", art("/etc/passwd", ""), nil, []string{`bad-artifact-path: artifact path "/etc/passwd" is absolute; use a path relative to the project`}},
		{"dotdot", "helper", art("a/../../x", ""), nil, []string{`bad-artifact-path: artifact path "a/../../x" leaves the project with '..'`}},
		{"hash mismatch", "helper", art("f.py", "sha256:"+strings.Repeat("0", 64)), root, []string{"artifact-hash: artifact \"f.py\" hash mismatch"}},
		{"missing file", "helper", art("g.py", ""), root, []string{`artifact-missing: artifact "g.py" does not exist`}},
		{"symlink out of root", "helper", art("link", ""), root, []string{`artifact-missing: artifact "link"`}},
	}
	_ = os.Symlink("/etc/passwd", dir+"/link")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			to := helper
			if tt.to != "helper" {
				to = &Agent{ID: tt.to}
			}
			probs := HandoffProblems(from, tt.to, to, tt.ctx, tt.root)
			if len(probs) != len(tt.want) {
				t.Fatalf("problems %v, want %v", probs, tt.want)
			}
			for i, p := range probs {
				if got := p.Code + ": " + p.Message; !strings.HasPrefix(got, tt.want[i]) {
					t.Errorf("got %q, want prefix %q", got, tt.want[i])
				}
			}
		})
	}
}

func TestCodesAreDocumented(t *testing.T) {
	src, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range src {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, _ := os.ReadFile(e.Name())
		for _, code := range quotedCodes(string(b)) {
			if _, ok := Codes[code]; !ok {
				t.Errorf("%s: code %q is not in Codes", e.Name(), code)
			}
		}
	}
}

// quotedCodes finds the code argument of diags.Add/errorAt/warnAt/report calls.
func quotedCodes(src string) []string {
	var out []string
	for _, marker := range []string{`, "`, `("`} {
		for _, part := range strings.Split(src, marker)[1:] {
			code, _, ok := strings.Cut(part, `"`)
			if ok && isCode(code) && strings.Contains(part[len(code):min(len(part), len(code)+4)], `",`) {
				out = append(out, code)
			}
		}
	}
	return out
}

func isCode(s string) bool {
	if !strings.Contains(s, "-") || strings.ContainsAny(s, " %./:") {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

func TestInputVar(t *testing.T) {
	for key, want := range map[string]string{"a_b": "ORCH_INPUT_A_B", "A-B": "ORCH_INPUT_A_B", "café.x": "ORCH_INPUT_CAF__X", "k9": "ORCH_INPUT_K9"} {
		if got := InputVar(key); got != want {
			t.Errorf("InputVar(%q) = %q, want %q", key, got, want)
		}
	}
}
