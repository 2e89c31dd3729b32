//go:build linux || darwin

package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

var updateScreens = flag.Bool("update-screens", false, "rewrite the golden screens under testdata/screens")

// ptyOrch is the real orch binary running in a pseudo-terminal of a given
// size: what it writes is kept, and shown through the vt emulator.
type ptyOrch struct {
	t   *testing.T
	cmd *exec.Cmd
	tty *os.File
	mu  sync.Mutex
	out []byte
	// sizes: the size from each offset of out on (a resize)
	sizes []ptySize
	done  chan struct{}
	err   error
}

type ptySize struct {
	at         int
	cols, rows int
}

func startPty(t *testing.T, dir string, cols, rows int, args ...string) *ptyOrch {
	t.Helper()
	bin, err := exec.LookPath("orch") // the test binary as orch (TestMain)
	if err != nil {
		t.Fatal(err)
	}
	p := &ptyOrch{t: t, cmd: exec.Command(bin, args...), done: make(chan struct{}), sizes: []ptySize{{0, cols, rows}}}
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm", "ORCH_DB="+filepath.Join(dir, ".orch", "orch.db"))
	p.tty, err = pty.StartWithSize(p.cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := p.tty.Read(buf)
			p.mu.Lock()
			p.out = append(p.out, buf[:n]...)
			p.mu.Unlock()
			if err != nil { // EIO once orch has exited and closed the terminal
				break
			}
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		p.tty.Close()
		if t.Failed() {
			t.Logf("screen at the end:\n%s", p.screen())
		}
	})
	return p
}

// screen is what the terminal shows now.
func (p *ptyOrch) screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := newVT(p.sizes[0].cols, p.sizes[0].rows)
	at := 0
	for _, s := range p.sizes[1:] {
		v.write(p.out[at:s.at])
		v.resize(s.cols, s.rows)
		at = s.at
	}
	v.write(p.out[at:])
	return v.screen()
}

// output is everything orch wrote since offset from.
func (p *ptyOrch) output(from int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]byte(nil), p.out[from:]...)
}

func (p *ptyOrch) written() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.out)
}

func (p *ptyOrch) resize(cols, rows int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := pty.Setsize(p.tty, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		p.t.Fatal(err)
	}
	p.sizes = append(p.sizes, ptySize{len(p.out), cols, rows})
}

func (p *ptyOrch) typeKeys(s string) {
	if _, err := p.tty.WriteString(s); err != nil {
		p.t.Fatal(err)
	}
}

// waitScreen waits until the screen shows every one of want (generous: a
// loaded machine) and returns it.
func (p *ptyOrch) waitScreen(want ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := p.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return s
		}
		select {
		case <-p.done:
			p.t.Fatalf("orch exited (%v) without showing %q; screen:\n%s", p.err, missing, s)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen never showed %q:\n%s", missing, s)
		}
	}
}

// waitAnswer waits until the screen's last line, the prompt's answer line,
// ends with what was typed.
func (p *ptyOrch) waitAnswer(typed string) {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		lines := strings.Split(strings.TrimRight(p.screen(), "\n"), "\n")
		if strings.HasSuffix(lines[len(lines)-1], typed) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the answer line never showed %q:\n%s", typed, p.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exit waits for orch to end and returns its exit status.
func (p *ptyOrch) exit() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(120 * time.Second):
		p.t.Fatalf("orch did not exit; screen:\n%s", p.screen())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Fatal(p.err)
	}
	return 0
}

var (
	screenRunID    = regexp.MustCompile(`\b[0-9a-f]{12}\b`)
	screenDuration = regexp.MustCompile(` {0,3}\b(\d+(\.\d+)?(ms|s)|\d+m\d\ds|\d+h\d\dm)\b`)
	screenSpinner  = regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]`)
)

// stable replaces what changes from run to run with fixed text of a fixed
// width: the run id, durations (with the spaces that pad them) and the
// spinner. It is applied to what orch writes, before the emulator lays it
// out, so that a line wraps at the same place whatever the durations were.
func stable(b []byte) []byte {
	b = screenRunID.ReplaceAll(b, []byte("<run-id---->"))
	b = screenDuration.ReplaceAll(b, []byte("<dur>"))
	return screenSpinner.ReplaceAll(b, []byte("*"))
}

// stableScreen is the screen as it is now, with stable text.
func (p *ptyOrch) stableScreen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := newVT(p.sizes[0].cols, p.sizes[0].rows)
	at := 0
	for _, s := range p.sizes[1:] {
		v.write(stable(p.out[at:s.at]))
		v.resize(s.cols, s.rows)
		at = s.at
	}
	v.write(stable(p.out[at:]))
	return v.screen()
}

func checkScreen(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "screens", name)
	if *updateScreens {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with go test ./cmd/orch -run %s -update-screens)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("screen %s differs (go test ./cmd/orch -run %s -update-screens rewrites it)\n--- want\n%s--- got\n%s", name, t.Name(), want, got)
	}
}

// liveCuelist: a failure with its output, the cue it blocks, a cue of two
// agents that work until the test lets them go (the file release), and a
// manual cue whose agent reports its state (shown beside it) and asks the
// person a question.
const liveCuelist = `cuelist:
  id: release
  cues:
    - {id: BUILD, agents: [ok]}
    - {id: TEST, agents: [tester], dependencies: [BUILD]}
    - {id: SHIP, agents: [ok], dependencies: [TEST]}
    - {id: PAIR, agents: [left, right], dependencies: [BUILD]}
    - id: REVIEW
      agents: [reviewer]
      dependencies: [BUILD]
      go: manual
      inputs:
        script:
          - report_status: {state: reading, progress: 0.3}
          - ask: {question: "The fixtures are missing: ship on friday anyway, with the known failure in the release notes?", complexity: deep}
---
agent: {id: ok, command: ["true"], concurrency: 3}
---
agent: {id: tester, command: [sh, -c, 'echo "collecting fixtures" >&2; echo "FAIL test_users: the fixture users.json is missing from testdata" >&2; exit 1']}
---
agent: {id: left, command: [sh, -c, 'while [ ! -f release ]; do sleep 0.05; done']}
---
agent: {id: right, command: [sh, -c, 'while [ ! -f release ]; do sleep 0.05; done']}
---
agent: {id: reviewer, protocol: jsonl, command: [script-agent]}
`

// The live display under a real terminal, 40 and 120 columns wide: the
// screen at the manual GO prompt, at the question prompt, and at the end,
// compared with golden screens.
func TestLiveScreens(t *testing.T) {
	for _, cols := range []int{40, 120} {
		t.Run(strconv.Itoa(cols), func(t *testing.T) {
			t.Parallel()
			dir := writeFiles(t, map[string]string{"cuelist.yaml": liveCuelist})
			p := startPty(t, dir, cols, 30, "run", "cuelist.yaml")

			p.waitScreen("[y/N]", "SHIP blocked", " go      PAIR   left#1", "right#", "FAIL test_users")
			checkScreen(t, strconv.Itoa(cols)+"-go-prompt.txt", p.stableScreen())

			p.typeKeys("y")
			p.waitAnswer("y")
			p.typeKeys("\r")
			p.waitScreen("question q1 from reviewer", "Enter alone")
			p.typeKeys("yes, ship it")
			p.waitAnswer("yes, ship it")
			checkScreen(t, strconv.Itoa(cols)+"-question-prompt.txt", p.stableScreen())

			p.typeKeys("\r")
			p.waitScreen("REVIEW completed")
			if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if code := p.exit(); code != 1 {
				t.Errorf("exit %d, want 1 (TEST failed)", code)
			}
			checkScreen(t, strconv.Itoa(cols)+"-end.txt", p.stableScreen())
			checkWidth(t, p.output(0), cols)
		})
	}
}

var (
	verdictLine = regexp.MustCompile(`run [0-9a-f]{12} \w+ in `)
	csi         = regexp.MustCompile(`\x1b\[[0-9;?]*[@-~]`)
)

// checkWidth fails when a line of the live display is wider than cols:
// every line orch writes starts at the first column (after a CR or a new
// line). The summary after the display is plain text, left to the
// terminal to wrap.
func checkWidth(t *testing.T, out []byte, cols int) {
	t.Helper()
	if loc := verdictLine.FindIndex(out); loc != nil {
		out = out[:loc[0]]
	}
	for _, line := range regexp.MustCompile(`[\r\n]`).Split(string(out), -1) {
		text := csi.ReplaceAllString(line, "")
		if w := displayWidth(text); w > cols {
			t.Errorf("a line %d columns wide on a terminal of %d: %q", w, cols, text)
		}
	}
}

// A terminal made narrower mid-run: the display redraws at the new width,
// and no line written after that is wider than it.
func TestLiveResize(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"cuelist.yaml": liveCuelist})
	p := startPty(t, dir, 120, 30, "run", "cuelist.yaml")
	p.waitScreen("[y/N]", "SHIP blocked", " go      PAIR   left#1", "right#")
	p.resize(40, 30)
	// Two redraws after the resize (the block is redrawn every 100ms and
	// at once on SIGWINCH): from then on every line is at the new width.
	from := p.written()
	for strings.Count(string(p.output(from)), "\x1b[J") < 2 {
		time.Sleep(50 * time.Millisecond)
	}
	from = p.written()
	p.typeKeys("y\r")
	p.waitScreen("question q1 from reviewer", "Enter alone")
	p.typeKeys("no\r")
	p.waitScreen("REVIEW completed")
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.exit()
	checkWidth(t, p.output(from), 40)
	if s := p.screen(); !strings.Contains(s, "blocked by it: SHIP") {
		t.Errorf("the screen after the resize:\n%s", s)
	}
}

// Ctrl-C at a prompt stops the run as Ctrl-C does anywhere else (exit 130),
// and the terminal gets its line editing and echo back.
func TestLiveCtrlCAtPrompt(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"cuelist.yaml": liveCuelist})
	p := startPty(t, dir, 80, 30, "run", "cuelist.yaml")
	p.waitScreen("[y/N]", "left#", "right#")
	p.typeKeys("\x03")
	if code := p.exit(); code != 130 {
		t.Fatalf("exit %d after Ctrl-C at the GO prompt, want 130", code)
	}
	s := p.screen()
	if !regexp.MustCompile(`run [0-9a-f]{12} stopped in`).MatchString(s) {
		t.Errorf("the run was not stopped:\n%s", s)
	}
	if !strings.Contains(s, "(no answer here)") {
		t.Errorf("the prompt was not closed:\n%s", s)
	}
	tio, err := unix.IoctlGetTermios(int(p.tty.Fd()), ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&unix.ECHO == 0 || tio.Lflag&unix.ICANON == 0 {
		t.Errorf("the terminal was left without echo or line editing: lflag %#x", tio.Lflag)
	}
}
