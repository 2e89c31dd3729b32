package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const secret = "TOKEN=ghp_do_not_print_me"

// TestIncludesStayInsideTheRoot checks that an include naming a file outside
// the project root (absolute, with "..", or through a link) is a diagnostic
// that names the path and never loads the file.
func TestIncludesStayInsideTheRoot(t *testing.T) {
	dir := tree(t, map[string]string{
		"secret.env":            secret + "\n",
		"outside/agents.yaml":   "agent: {id: far, command: [x]}\n",
		"project/agents/a.yaml": "agent: {id: a, command: [x]}\n",
	})
	must(t, os.Symlink("../secret.env", "project/leak.yaml"))
	must(t, os.Symlink("../outside", "project/far"))
	must(t, os.Symlink("agents", "project/near")) // a link inside the root is fine
	abs := filepath.Join(dir, "secret.env")
	must(t, os.WriteFile("project/cuelist.yaml", []byte(fmt.Sprintf(
		"cuelist:\n  id: c\n  include:\n  - %s\n  - ../secret.env\n  - leak.yaml\n  - far/agents.yaml\n  - near/a.yaml\n  - agents/../../secret.env\n  cues: []\n", abs)), 0o644))
	set, got := validate(t, "project/cuelist.yaml")
	expectDiags(t, withCode(got, "outside-root"),
		fmt.Sprintf("project/cuelist.yaml:4:5: error: include %q leads outside the project root project; includes are relative to this file and stay below the root (--root widens it) [outside-root]", abs),
		`project/cuelist.yaml:5:5: error: include "../secret.env" leads outside the project root project; includes are relative to this file and stay below the root (--root widens it) [outside-root]`,
		`project/cuelist.yaml:6:5: error: include "leak.yaml": project/leak.yaml leads outside the project root project [outside-root]`,
		`project/cuelist.yaml:7:5: error: include "far/agents.yaml": project/far/agents.yaml leads outside the project root project [outside-root]`,
		`project/cuelist.yaml:9:5: error: include "agents/../../secret.env" leads outside the project root project; includes are relative to this file and stay below the root (--root widens it) [outside-root]`,
	)
	if len(set.Files) != 2 || set.Agent("a") == nil {
		t.Errorf("files %v: want the cuelist and agents/a.yaml (through the link inside)", set.Files)
	}
	// A root that holds both is allowed.
	set, diags, err := Load([]string{"project/cuelist.yaml"}, LoadOptions{Root: "."})
	if err != nil || set.Agent("far") == nil || len(diags) != 3 { // the absolute and two ../secret.env, now inside
		t.Errorf("with the root above: err %v, diags %v", err, diags)
	}
}

// TestWalkedLinkLeadingOutside checks that a directory walked for specs does
// not read a link that leads outside it.
func TestWalkedLinkLeadingOutside(t *testing.T) {
	dir := tree(t, map[string]string{"secret.env": secret + "\n", "specs/a.yaml": "agent: {id: a, command: [x]}\n"})
	must(t, os.Symlink(filepath.Join(dir, "secret.env"), "specs/leak.yaml")) // absolute links are refused too
	_, got := validate(t, "specs")
	expectDiags(t, got, "specs/leak.yaml: error: cannot read specs/leak.yaml: it leads outside the project root specs [unreadable-file]")
}

// TestIncludeGlobsDoNotFollowLinks checks that wildcards do not go through
// links to directories: ten links to "." under six stars named a million
// paths (21 s, 421 MB), and a glob matching too many paths is a diagnostic.
func TestIncludeGlobsDoNotFollowLinks(t *testing.T) {
	tree(t, map[string]string{
		"d/x.yaml":     "agent: {id: x, command: [y]}\n",
		"cuelist.yaml": "cuelist:\n  id: c\n  include: [d/*/*/*/*/*/*/x.yaml, d/*.yaml]\n  cues: []\n",
	})
	for i := range 10 {
		must(t, os.Symlink(".", fmt.Sprintf("d/s%d", i)))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	set, got := validate(t, "cuelist.yaml")
	runtime.ReadMemStats(&after)
	expectDiags(t, withCode(got, "unresolved-include"), `cuelist.yaml:3:13: error: include "d/*/*/*/*/*/*/x.yaml" matches no file [unresolved-include]`)
	if set.Agent("x") == nil {
		t.Error("d/*.yaml did not load d/x.yaml")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 20<<20 {
		t.Errorf("loading allocated %d MB", alloc>>20)
	}

	many := map[string]string{"cuelist.yaml": "cuelist:\n  id: c\n  include: [m/*/*]\n  cues: []\n"}
	for i := range MaxGlobMatches/100 + 1 {
		for j := range 100 {
			many[fmt.Sprintf("m/%d/%d.txt", i, j)] = ""
		}
	}
	tree(t, many)
	_, got = validate(t, "cuelist.yaml")
	expectDiags(t, withCode(got, "bad-include"), `cuelist.yaml:3:13: error: include "m/*/*" is not a usable glob: it matches more than 10000 paths [bad-include]`)
}

// TestNonRegularFilesAreNotRead checks that a device given, or a directory
// named like a spec, is refused before anything is read from it.
func TestNonRegularFilesAreNotRead(t *testing.T) {
	tree(t, map[string]string{"specs/dir.yaml/a.txt": "", "specs/ok.yaml": "agent: {id: a, command: [x]}\n"})
	_, _, err := Load([]string{"/dev/zero"}, LoadOptions{})
	var pe *PathError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "not a regular file (a device)") {
		t.Errorf("Load(/dev/zero) error = %v, want a PathError: not a regular file", err)
	}
	if _, _, err := Load([]string{"specs"}, LoadOptions{}); err != nil {
		t.Errorf("a directory named *.yaml is walked into, not read: %v", err)
	}
}

// withCode keeps the diagnostics (as validate returns them) with one of the codes.
func withCode(diags []string, codes ...string) []string {
	var out []string
	for _, d := range diags {
		for _, c := range codes {
			if strings.HasSuffix(d, "["+c+"]") {
				out = append(out, d)
			}
		}
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDoubleStarIncludes checks that "**" in an include means any number of
// directories, none included, and that it does not enter links to
// directories: a link loop under it ends, and a link leading out is not
// followed.
func TestDoubleStarIncludes(t *testing.T) {
	dir := tree(t, map[string]string{
		"secret/s.yaml":             "agent: {id: leaked, command: [x]}\n",
		"p/cuelist.yaml":            "cuelist:\n  id: c\n  include: ['**/*.agent.yaml', 'deep/**', 'none/**/*.yaml']\n  cues: []\n",
		"p/top.agent.yaml":          "agent: {id: top, command: [x]}\n",
		"p/a/one.agent.yaml":        "agent: {id: one, command: [x]}\n",
		"p/a/b/c/three.agent.yaml":  "agent: {id: three, command: [x]}\n",
		"p/a/b/c/not-an-agent.yaml": "agent: {id: other, command: [x]}\n",
		"p/deep/x/y/z.yaml":         "agent: {id: z, command: [x]}\n",
		"p/.hidden/h.agent.yaml":    "agent: {id: hidden, command: [x]}\n",
	})
	must(t, os.Symlink("..", "p/a/b/loop"))                          // a loop back up
	must(t, os.Symlink(".", "p/deep/x/self"))                        // a loop onto itself
	must(t, os.Symlink(filepath.Join(dir, "secret"), "p/a/outside")) // a link leading out
	set, got := validate(t, "p/cuelist.yaml")
	expectDiags(t, withCode(got, "unresolved-include", "bad-include", "outside-root", "unreadable-include"),
		`p/cuelist.yaml:3:43: error: include "none/**/*.yaml" matches no file [unresolved-include]`)
	var ids []string
	for _, a := range set.Agents {
		ids = append(ids, a.ID)
	}
	slices.Sort(ids)
	if got, want := strings.Join(ids, " "), "hidden one three top z"; got != want {
		t.Errorf("agents loaded: %s, want %s", got, want)
	}
}

// TestDoubleStarCap checks that "**" over a tree of more than MaxGlobMatches
// directories is a diagnostic, not a walk without end.
func TestDoubleStarCap(t *testing.T) {
	tree(t, map[string]string{"cuelist.yaml": "cuelist:\n  id: c\n  include: ['**/x.yaml']\n  cues: []\n"})
	for i := range MaxGlobMatches/100 + 1 {
		for j := range 100 {
			must(t, os.MkdirAll(fmt.Sprintf("m/%d/%d", i, j), 0o755))
		}
	}
	_, got := validate(t, "cuelist.yaml")
	expectDiags(t, withCode(got, "bad-include"), `cuelist.yaml:3:13: error: include "**/x.yaml" is not a usable glob: it matches more than 10000 paths [bad-include]`)
}
