// Package hooks_test checks the two ways orch plugs into other people's
// checks: the composite GitHub Action (action.yml) and the pre-commit hooks
// (.pre-commit-hooks.yaml), both at the repository's root where GitHub and
// pre-commit look for them. The action's steps are run as the Actions runner
// runs a composite action's bash steps; the hooks through pre-commit itself
// when it is installed (.ci/run installs it).
package hooks_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// repoRoot is the checkout the test runs in (two levels up from e2e/hooks).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

type action struct {
	Name   string
	Inputs map[string]struct {
		Description string
		Default     string
	}
	Runs struct {
		Using string
		Steps []step
	}
}

type step struct {
	Name  string
	ID    string
	Uses  string
	Shell string
	Run   string
	Env   map[string]string
	With  map[string]string
}

func loadAction(t *testing.T) action {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

var expression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// runner plays the part of the Actions runner for the action's bash steps.
type runner struct {
	t         *testing.T
	action    action
	workspace string
	temp      string
	path      []string // what the steps appended to GITHUB_PATH
}

// expand replaces the ${{ }} expressions the action may use; any other is a
// test failure, so the runner here never silently differs from GitHub's.
func (r *runner) expand(s string, inputs map[string]string) string {
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		e := expression.FindStringSubmatch(m)[1]
		switch {
		case e == "github.action_path":
			return repoRoot(r.t)
		case strings.HasPrefix(e, "inputs."):
			name := strings.TrimPrefix(e, "inputs.")
			in, ok := r.action.Inputs[name]
			if !ok {
				r.t.Fatalf("action.yml uses ${{ %s }}: no such input", e)
			}
			if v, ok := inputs[name]; ok {
				return v
			}
			return in.Default
		}
		r.t.Fatalf("action.yml uses ${{ %s }}, which this test's runner does not know", e)
		return ""
	})
}

// runStep runs one bash step as the runner does (bash --noprofile --norc
// -eo pipefail FILE) and returns its output, its exit code and what it wrote
// to GITHUB_OUTPUT.
func (r *runner) runStep(s step, inputs map[string]string) (string, int, string) {
	r.t.Helper()
	if s.Shell != "bash" {
		r.t.Fatalf("step %q: shell %q (composite steps must name bash)", s.Name, s.Shell)
	}
	if strings.Contains(s.Run, "${{") {
		r.t.Fatalf("step %q pastes an expression into its script (script injection): pass it through env", s.Name)
	}
	script := filepath.Join(r.temp, "step.sh")
	if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
		r.t.Fatal(err)
	}
	ghPath, ghOutput := filepath.Join(r.temp, "github_path"), filepath.Join(r.temp, "github_output")
	for _, f := range []string{ghPath, ghOutput} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = r.workspace
	env := append(os.Environ(), "GITHUB_PATH="+ghPath, "GITHUB_OUTPUT="+ghOutput, "RUNNER_TEMP="+r.temp,
		"GITHUB_WORKSPACE="+r.workspace)
	if len(r.path) > 0 {
		env = append(env, "PATH="+strings.Join(r.path, string(os.PathListSeparator))+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	for k, v := range s.Env {
		env = append(env, k+"="+r.expand(v, inputs))
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	if b, _ := os.ReadFile(ghPath); len(b) > 0 {
		r.path = append(strings.Fields(string(b)), r.path...)
	}
	output, _ := os.ReadFile(ghOutput)
	return out.String(), code, string(output)
}

func (r *runner) step(id string) step {
	for _, s := range r.action.Runs.Steps {
		if s.ID == id || s.Name == id {
			return s
		}
	}
	r.t.Fatalf("action.yml has no step %q", id)
	return step{}
}

const agentSpec = "agent:\n  id: builder\n  command: [make]\n  provides: [binary]\n"
const goodCuelist = "cuelist:\n  id: release\n  cues:\n    - {id: BUILD, agents: [builder]}\n"

// badCuelist names a dependency that does not exist (line 5, column 22).
const badCuelist = "cuelist:\n  id: release\n  cues:\n    - {id: BUILD, agents: [builder]}\n    - {id: SHIP, agents: [builder], dependencies: [BUIDL]}\n"

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAction(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the action's steps are bash; GitHub's Windows runners are not covered here")
	}
	a := loadAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q, want composite", a.Runs.Using)
	}
	for _, s := range a.Runs.Steps {
		if s.Uses != "" && !strings.HasPrefix(s.Uses, "actions/setup-go@") {
			t.Fatalf("step uses %s: only actions/setup-go is expected (this test's runner has Go already)", s.Uses)
		}
	}
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"specs/agents.yaml": agentSpec, "specs/release.yaml": goodCuelist})
	r := &runner{t: t, action: a, workspace: work, temp: t.TempDir()}

	// Install builds orch from the action's own checkout and puts it on PATH.
	out, code, _ := r.runStep(r.step("Install orch"), nil)
	if code != 0 {
		t.Fatalf("Install orch: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "orch") || len(r.path) == 0 {
		t.Fatalf("Install orch printed no version or added nothing to GITHUB_PATH:\n%s", out)
	}
	validate := r.step("validate")

	t.Run("valid", func(t *testing.T) {
		out, code, output := r.runStep(validate, nil)
		if code != 0 || !strings.Contains(output, "valid=true") {
			t.Fatalf("exit %d, GITHUB_OUTPUT %q\n%s", code, output, out)
		}
		if !strings.Contains(out, "valid") || strings.Contains(out, "::error") {
			t.Fatalf("want the summary and no annotation:\n%s", out)
		}
	})
	t.Run("annotation at the line", func(t *testing.T) {
		writeFiles(t, work, map[string]string{"specs/release.yaml": badCuelist})
		defer writeFiles(t, work, map[string]string{"specs/release.yaml": goodCuelist})
		out, code, output := r.runStep(validate, nil)
		if code != 1 || !strings.Contains(output, "valid=false") {
			t.Fatalf("exit %d (want 1), GITHUB_OUTPUT %q\n%s", code, output, out)
		}
		want := regexp.MustCompile(`(?m)^::error file=specs/release\.yaml,line=5,col=\d+::.*BUIDL`)
		if !want.MatchString(out) {
			t.Fatalf("no annotation at specs/release.yaml line 5 naming BUIDL:\n%s", out)
		}
	})
	t.Run("paths on lines, a glob", func(t *testing.T) {
		writeFiles(t, work, map[string]string{"more/extra.yaml": "agent:\n  id: extra\n  command: [\"true\"]\n"})
		out, code, _ := r.runStep(validate, map[string]string{"paths": "specs/*.yaml\nmore/\n"})
		if code != 0 || !strings.Contains(out, "in 3 files") {
			t.Fatalf("exit %d, want 3 files valid:\n%s", code, out)
		}
	})
	t.Run("strict", func(t *testing.T) {
		// An agent no cue uses is a warning; strict makes it fail.
		writeFiles(t, work, map[string]string{"warn/agents.yaml": agentSpec + "---\nagent:\n  id: idle\n  command: [\"true\"]\n",
			"warn/release.yaml": goodCuelist})
		if out, code, _ := r.runStep(validate, map[string]string{"paths": "warn/"}); code != 0 || !strings.Contains(out, "::warning") {
			t.Fatalf("without strict: exit %d, want 0 with a warning annotation:\n%s", code, out)
		}
		if out, code, _ := r.runStep(validate, map[string]string{"paths": "warn/", "strict": "true"}); code != 1 {
			t.Fatalf("strict: exit %d, want 1:\n%s", code, out)
		}
	})
	t.Run("empty paths", func(t *testing.T) {
		out, code, _ := r.runStep(validate, map[string]string{"paths": " \n"})
		if code != 2 || !strings.Contains(out, "::error::the input paths is empty") {
			t.Fatalf("exit %d, want 2 and an annotation:\n%s", code, out)
		}
	})
	t.Run("no injection", func(t *testing.T) {
		out, code, _ := r.runStep(validate, map[string]string{"paths": `"; touch pwned; echo "`, "root": "$(touch pwned2)"})
		for _, f := range []string{"pwned", "pwned2"} {
			if _, err := os.Stat(filepath.Join(work, f)); err == nil {
				t.Fatalf("an input ran a command (%s exists):\n%s", f, out)
			}
		}
		if code == 0 {
			t.Fatalf("paths naming no file passed:\n%s", out)
		}
	})
}

type hook struct {
	ID            string
	Entry         string
	Args          []string
	Language      string
	Files         string
	PassFilenames *bool `yaml:"pass_filenames"`
}

func loadHooks(t *testing.T) map[string]hook {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []hook
	if err := yaml.Unmarshal(b, &hooks); err != nil {
		t.Fatalf(".pre-commit-hooks.yaml: %v", err)
	}
	byID := map[string]hook{}
	for _, h := range hooks {
		byID[h.ID] = h
	}
	return byID
}

// TestPreCommitHooks runs each hook through pre-commit's try-repo on a
// project of its own: a broken cuelist fails the commit with the diagnostic
// at its line, the fixed one passes. orch-validate (language golang) builds
// orch as pre-commit does, from the module: it runs when
// ORCH_TEST_PRECOMMIT_GOLANG=1 (.ci/run sets it), as that build takes minutes.
func TestPreCommitHooks(t *testing.T) {
	hooks := loadHooks(t)
	for _, id := range []string{"orch-validate", "orch-validate-system"} {
		h, ok := hooks[id]
		if !ok {
			t.Fatalf(".pre-commit-hooks.yaml has no hook %s", id)
		}
		// A cuelist needs the agents of other files: the hook validates its
		// directories whole, never the changed files alone.
		if h.Entry != "orch validate" || h.PassFilenames == nil || *h.PassFilenames || len(h.Args) == 0 {
			t.Fatalf("hook %s: entry %q, pass_filenames %v, args %v", id, h.Entry, h.PassFilenames, h.Args)
		}
	}
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Skip("pre-commit is not installed (apt-get install pre-commit; .ci/run installs it)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "orch"), "./cmd/orch")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cases := []struct {
		hook string
		path string // prepended to PATH
	}{{"orch-validate-system", bin}}
	if os.Getenv("ORCH_TEST_PRECOMMIT_GOLANG") == "1" {
		cases = append(cases, struct{ hook, path string }{"orch-validate", ""})
	}
	home := t.TempDir() // pre-commit's cache of hook repositories and environments
	for _, c := range cases {
		t.Run(c.hook, func(t *testing.T) {
			project := t.TempDir()
			git := func(args ...string) {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir = project
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			git("init", "-q")
			writeFiles(t, project, map[string]string{"specs/agents.yaml": agentSpec, "specs/release.yaml": badCuelist,
				"compose.yaml": "services:\n  web: {image: nginx}\n"}) // not a spec: outside specs/
			git("add", ".")
			tryRepo := func() (string, int) {
				t.Helper()
				cmd := exec.Command("pre-commit", "try-repo", repoRoot(t), c.hook, "--all-files")
				cmd.Dir = project
				cmd.Env = append(os.Environ(), "PRE_COMMIT_HOME="+home, "GIT_CONFIG_GLOBAL=/dev/null")
				if c.path != "" {
					cmd.Env = append(cmd.Env, "PATH="+c.path+string(os.PathListSeparator)+os.Getenv("PATH"))
				}
				if gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
					// pre-commit gives the golang hook a GOPATH of its own; the
					// module cache is reused rather than downloaded again.
					cmd.Env = append(cmd.Env, "GOMODCACHE="+strings.TrimSpace(string(gomodcache)))
				}
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				if ee, ok := err.(*exec.ExitError); ok {
					return out.String(), ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				return out.String(), 0
			}
			out, code := tryRepo()
			if code != 1 || !regexp.MustCompile(`specs/release\.yaml:5:\d+: error: .*BUIDL`).MatchString(out) {
				t.Fatalf("broken cuelist: exit %d (want 1) with the diagnostic at line 5:\n%s", code, out)
			}
			writeFiles(t, project, map[string]string{"specs/release.yaml": goodCuelist})
			git("add", ".")
			if out, code := tryRepo(); code != 0 || !strings.Contains(out, "Passed") {
				t.Fatalf("fixed cuelist: exit %d (want 0, Passed):\n%s", code, out)
			}
		})
	}
}
