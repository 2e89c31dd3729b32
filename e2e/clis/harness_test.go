//go:build clis_e2e && linux

package clis

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/internal/mockmodel"
)

// patience bounds one orch command (a run of a few cues through Node CLIs
// on a loaded 2-core machine takes seconds; minutes means it hangs).
const patience = 3 * time.Minute

var (
	orchBin   string // the orch binary built for these tests
	installed tools
	skipWhy   string
)

func TestMain(m *testing.M) {
	os.Exit(setup(m))
}

func setup(m *testing.M) int {
	var err error
	installed, skipWhy, err = installTools()
	if err != nil {
		fmt.Fprintln(os.Stderr, "clis:", err)
		return 1
	}
	if skipWhy == "" {
		dir, err := os.MkdirTemp("", "orch-clis-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "clis:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		orchBin = filepath.Join(dir, "orch")
		cmd := exec.Command("go", "build", "-o", orchBin, "./cmd/orch")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "clis: go build ./cmd/orch: %v\n%s", err, out)
			return 1
		}
	}
	return m.Run()
}

// world is one test's private machine: a HOME with the CLIs' settings,
// the mock model, the environment orch (and so the CLIs) runs in, and a
// project directory.
type world struct {
	t       *testing.T
	dir     string // the project: the cuelist and what the CLIs write
	home    string
	mock    *mockmodel.Server
	env     []string
	marker  string // in every process's environment: none may outlive orch
	pathDir []string
}

// newWorld starts the mock with scripts and writes the CLIs' settings into
// a new HOME. The project directory is a git repository with one commit
// when files are given (they are committed: a worktree starts from them).
func newWorld(t *testing.T, scripts map[string]mockmodel.Script, legacy bool) *world {
	t.Helper()
	return newWorldOf(t, mockmodel.Config{Scripts: scripts}, legacy)
}

// newWorldOf is newWorld with the mock's whole configuration (its phrases).
func newWorldOf(t *testing.T, cfg mockmodel.Config, legacy bool) *world {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	root := t.TempDir()
	w := &world{t: t, dir: filepath.Join(root, "project"), home: filepath.Join(root, "home"),
		marker: fmt.Sprintf("ORCH_CLIS_E2E=%s-%d", t.Name(), time.Now().UnixNano())}
	if os.Getenv("CLIS_DUMP") != "" { // keep every request to read when a CLI misbehaves
		cfg.Dump = filepath.Join(os.Getenv("CLIS_DUMP"), strings.ReplaceAll(t.Name(), "/", "_"))
	}
	mock, err := mockmodel.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	w.mock = mock
	for _, d := range []string{w.dir, w.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.writeSettings(legacy)
	path := []string{filepath.Dir(orchBin), installed.node}
	if legacy {
		path = append(path, installed.legacy)
	}
	path = append(path, installed.current, "/usr/local/bin", "/usr/bin", "/bin")
	w.env = []string{
		"PATH=" + strings.Join(path, ":"),
		"HOME=" + w.home,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(w.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".local", "state"),
		"LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1",
		w.marker,
		// claude and the Claude Agent SDK: the mock, no other traffic.
		"ANTHROPIC_BASE_URL=" + mock.URL,
		"ANTHROPIC_API_KEY=sk-ant-mock",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		// codex and codex-acp: $CODEX_HOME/config.toml names the mock.
		"CODEX_HOME=" + filepath.Join(w.home, ".codex"),
		"MOCK_API_KEY=mock",
		// gemini: the mock, an API key, this workspace trusted.
		"GOOGLE_GEMINI_BASE_URL=" + mock.URL,
		"GEMINI_API_KEY=mock",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	}
	// No IS_SANDBOX: as root, an agent that needs it says so (the README's
	// advice: env: {IS_SANDBOX: "1"}), see TestClaudeAsRoot.
	return w
}

// writeSettings writes each CLI's settings into the private HOME.
func (w *world) writeSettings(legacy bool) {
	approval := ""
	if legacy {
		// The former codex-acp (its own, older codex) asks before edits
		// and commands with this policy; codex 0.169 refuses it.
		approval = `approval_policy = "untrusted"`
	}
	files := map[string]string{
		// claude-agent-acp starts a session in Claude's auto mode (a
		// classifier decides) unless told otherwise: orch's permissions
		// decide here, as they do for claude-code-acp.
		".claude/settings.json": `{"permissions": {"defaultMode": "default"}}`,
		".codex/config.toml": fmt.Sprintf(`model = "gpt-5.5"
model_provider = "mock"
%s

[model_providers.mock]
name = "mock model"
base_url = "%s/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
`, approval, w.mock.URL),
		".gemini/settings.json": `{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
 "privacy": {"usageStatisticsEnabled": false}}`,
	}
	for name, content := range files {
		p := filepath.Join(w.home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
}

// write writes the project's files; commit makes the project a git
// repository with them as its first commit.
func (w *world) write(files map[string]string, commit bool) {
	w.t.Helper()
	for name, content := range files {
		p := filepath.Join(w.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	if commit {
		w.git("init", "-q", "-b", "main")
		w.git("add", "-A")
		w.git("commit", "-q", "-m", "start")
	}
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// result is what one orch command did.
type result struct {
	code           int
	stdout, stderr string
}

// orch runs the orch binary in the project and waits for it.
func (w *world) orch(args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, orchBin, args...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		w.t.Fatalf("orch %s did not end within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), patience, r.stdout, r.stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("orch %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// run runs the cuelist to its end and checks how it ended; then that no
// process of the run is left.
func (w *world) run(cuelist string, wantCode int) result {
	w.t.Helper()
	r := w.orch("run", cuelist)
	if r.code != wantCode {
		w.t.Fatalf("orch run %s exited %d, want %d\nstdout:\n%s\nstderr:\n%s\nlogs:\n%s", cuelist, r.code, wantCode,
			r.stdout, r.stderr, w.orch("logs", "last").stdout)
	}
	w.noneLeft()
	return r
}

// status is orch status --output json of the last run.
type status struct {
	ID           string  `json:"id"`
	State        string  `json:"state"`
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Cues         []struct {
		ID           string         `json:"id"`
		State        string         `json:"state"`
		Reason       string         `json:"reason"`
		CostUSD      float64        `json:"cost_usd"`
		InputTokens  int64          `json:"input_tokens"`
		OutputTokens int64          `json:"output_tokens"`
		Outputs      map[string]any `json:"outputs"`
		Items        *struct {
			Count     int      `json:"count"`
			Completed int      `json:"completed"`
			IDs       []string `json:"ids"`
		} `json:"items"` // a fan-out's
	} `json:"cues"`
	Questions []struct {
		ID       string `json:"id"`
		Question string `json:"question"`
		State    string `json:"state"`
	} `json:"questions"`
	Worktrees []struct {
		Cue    string `json:"cue"`
		Agent  string `json:"agent"`
		Branch string `json:"branch"`
		Commit string `json:"commit"`
	} `json:"worktrees"`
	Result *struct {
		Branch string `json:"branch"`
		Ahead  int    `json:"ahead"`
	} `json:"result"`
}

// attemptBranch is the branch the cue's one attempt committed to (the run
// also lists its result branch, which orch's merge made).
func (s status) attemptBranch(t *testing.T, cue string) string {
	t.Helper()
	var found []string
	for _, wt := range s.Worktrees {
		if wt.Cue == cue && !strings.HasPrefix(wt.Agent, "orch:") && wt.Commit != "" {
			found = append(found, wt.Branch)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s's attempt branches: %q, want one committed (worktrees: %+v)", cue, found, s.Worktrees)
	}
	return found[0]
}

func (w *world) status() status {
	w.t.Helper()
	r := w.orch("status", "last", "--output", "json")
	var s status
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		w.t.Fatalf("orch status --output json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	return s
}

// noneLeft fails when a process of this test (its environment carries the
// marker) is still alive: orch ends every process it started.
func (w *world) noneLeft() {
	w.t.Helper()
	var left []string
	deadline := time.Now().Add(5 * time.Second) // a process being reaped
	for {
		left = processesWith(w.marker)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		w.t.Errorf("processes left after orch ended:\n  %s", strings.Join(left, "\n  "))
	}
}

// processesWith lists the processes whose environment holds kv.
func processesWith(kv string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		env, err := os.ReadFile("/proc/" + pid + "/environ")
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), []byte("\x00"+kv+"\x00")) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		found = append(found, pid+" "+strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")))
	}
	return found
}

// file reads a file of the project ("" if it does not exist).
func (w *world) file(name string) string {
	b, err := os.ReadFile(filepath.Join(w.dir, name))
	if err != nil {
		return ""
	}
	return string(b)
}

// contains fails unless text holds each of wants.
func contains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
}

// scripted are the mock's requests answered from script, in order.
func (w *world) scripted(script string) []mockmodel.Request {
	var out []mockmodel.Request
	for _, r := range w.mock.Requests() {
		if r.Script == script {
			out = append(out, r)
		}
	}
	return out
}

// describe is one line per request: what it asked and what answered it.
func describe(reqs []mockmodel.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&b, "  %s\n", r)
	}
	return b.String()
}

// TestNoneLeftSees checks the check: a process carrying the marker is found.
func TestNoneLeftSees(t *testing.T) {
	marker := fmt.Sprintf("ORCH_CLIS_E2E=straggler-%d", time.Now().UnixNano())
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if left := processesWith(marker); len(left) != 1 || !strings.Contains(left[0], "sleep 30") {
		t.Errorf("processesWith found %q, want the sleep", left)
	}
}
