//go:build linux

// The control tests find processes through /proc (Linux only).

package main

// The harness of the run-control tests (control_test.go): every test drives
// the real orch binary as a subprocess, the way a user or a CI script does,
// so signals, exit codes, process groups and the database shared between
// processes are all real.
//
// The binary is this test binary itself: TestMain (main_test.go) hands
// control to orch's main when argv[0] is named "orch", and to the fake agent
// when it is named "fake-agent". Each test gets a directory with symlinks of
// those names, put first in PATH.

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// markVar is set, with a value unique to the test, in the environment of
// every orch the test starts. Agents inherit orch's environment, so every
// process of the test carries it: a leftover is found by its mark even when
// nobody recorded its pid, and a recycled pid is never mistaken for ours.
const markVar = "ORCH_CONTROL_TEST_MARK"

// ctl is one test's sandbox: a directory, a database, an environment.
type ctl struct {
	t    *testing.T
	dir  string // specs, agents' logs and pid files
	db   string
	env  []string
	mark string

	mu    sync.Mutex
	orchs map[int]bool // pids of the orch processes the test started
}

var markSeq struct {
	sync.Mutex
	n int
}

func newCtl(t *testing.T) *ctl {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// orch keeps each run's work files in $TMPDIR; a killed orch cannot
	// remove them, so they go in the test's directory.
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"orch", "fake-agent", "orch-hold-lock"} {
		if err := os.Symlink(exe, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	markSeq.Lock()
	markSeq.n++
	mark := fmt.Sprintf("%d-%d-%d", os.Getpid(), markSeq.n, time.Now().UnixNano())
	markSeq.Unlock()
	c := &ctl{t: t, dir: dir, db: filepath.Join(dir, "orch.db"), mark: mark, orchs: map[int]bool{}}
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "PATH", "ORCH_DB", "NO_COLOR", "TMPDIR", markVar:
		default:
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ORCH_DB="+c.db, "NO_COLOR=1", "TMPDIR="+filepath.Join(dir, "tmp"), markVar+"="+mark)
	// Whatever happens to the test, nothing it started survives it.
	t.Cleanup(func() {
		for _, pid := range c.marked() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return c
}

// path is a file in the test's directory.
func (c *ctl) path(name string) string { return filepath.Join(c.dir, name) }

// write writes a file of the test's directory, with @DIR@ replaced by the
// directory (specs name the files their agents write by absolute path: a
// jsonl agent gets no ORCH_INPUT_* variables).
func (c *ctl) write(name, content string) string {
	c.t.Helper()
	p := c.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "@DIR@", c.dir)), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// orchProc is a running orch.
type orchProc struct {
	c      *ctl
	args   []string
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	done   chan struct{}
	code   int // valid once done is closed; -1: killed by a signal
}

// start starts orch with args in the test's directory.
func (c *ctl) start(args ...string) *orchProc {
	c.t.Helper()
	p := &orchProc{c: c, args: args, done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(c.dir, "bin", "orch"), args...)
	p.cmd.Dir, p.cmd.Env = c.dir, c.env
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.WaitDelay = 5 * time.Second // an agent must not hold orch's output open forever
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("starting orch %s: %v", strings.Join(args, " "), err)
	}
	c.mu.Lock()
	c.orchs[p.cmd.Process.Pid] = true
	c.mu.Unlock()
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	// Never leave an orch behind a failed test (its agents are killed by mark).
	c.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *orchProc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *orchProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to end and returns its exit code; past
// timeout it kills it and fails the test.
func (p *orchProc) wait(timeout time.Duration) int {
	p.c.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.c.t.Fatalf("orch %s did not end within %s\n%s", strings.Join(p.args, " "), timeout, p.output())
		return -1
	}
}

// signal sends sig to this orch process only (not to its agents: they have
// their own process groups anyway).
func (p *orchProc) signal(sig syscall.Signal) {
	p.c.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.c.t.Fatalf("signalling orch %s: %v", strings.Join(p.args, " "), err)
	}
}

// output is the process's stdout and stderr, for failure messages.
func (p *orchProc) output() string {
	return fmt.Sprintf("--- orch %s: stdout\n%s--- stderr\n%s", strings.Join(p.args, " "), p.stdout.String(), p.stderr.String())
}

// orch runs orch to its end and returns its exit code and output.
func (c *ctl) orch(args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	p := c.start(args...)
	code = p.wait(60 * time.Second)
	return code, p.stdout.String(), p.stderr.String()
}

// mustOrch runs orch and fails the test unless it exits with want.
func (c *ctl) mustOrch(want int, args ...string) (stdout, stderr string) {
	c.t.Helper()
	code, stdout, stderr := c.orch(args...)
	if code != want {
		c.t.Fatalf("orch %s: exit %d, want %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout, stderr
}

// event is one line of `orch events RUN --output json`.
type event struct {
	RunID   string          `json:"run_id"`
	Seq     int64           `json:"seq"`
	At      time.Time       `json:"at"`
	Type    string          `json:"type"`
	Cue     string          `json:"cue"`
	Agent   string          `json:"agent"`
	Attempt int             `json:"attempt"`
	State   string          `json:"state"`
	Reason  string          `json:"reason"`
	Data    json.RawMessage `json:"data"`
}

func (e event) String() string {
	return fmt.Sprintf("%d %s cue=%s agent=%s state=%s reason=%q data=%s", e.Seq, e.Type, e.Cue, e.Agent, e.State, e.Reason, e.Data)
}

// events is the event log of run ref, in the order orch prints it.
func (c *ctl) events(ref string) []event {
	c.t.Helper()
	stdout, _ := c.mustOrch(0, "events", ref, "--output", "json")
	var out []event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			c.t.Fatalf("orch events %s: line %q: %v", ref, sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// checkSeqs checks that a run's event sequence numbers are exactly 1..N.
func checkSeqs(t *testing.T, events []event) {
	t.Helper()
	if len(events) == 0 {
		t.Errorf("the run has no events")
	}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Errorf("event %d of %d has seq %d, want %d (sequence numbers must be exactly 1..N): %v", i+1, len(events), e.Seq, i+1, e)
			return
		}
	}
}

// runState is `orch status RUN --output json`.
type runState struct {
	ID        string      `json:"id"`
	State     string      `json:"state"`
	Reason    string      `json:"reason"`
	Cues      []cueStatus `json:"cues"`
	Conflicts []conflict  `json:"conflicts"`
	Owner     *struct {
		PID int `json:"pid"`
	} `json:"owner"`
	Counts map[string]int `json:"counts"`
}

// conflict is an escalation.conflict decision: the data of an
// escalation/conflict event, and an entry of orch status's conflicts.
type conflict struct {
	ConflictType string   `json:"conflict_type"`
	Cues         []string `json:"cues_involved"`
	Resource     string   `json:"resource_in_question"`
	Resolution   string   `json:"proposed_resolution"`
	Winner       string   `json:"winner"`
}

type cueStatus struct {
	ID       string         `json:"id"`
	State    string         `json:"state"`
	Reason   string         `json:"reason"`
	Outputs  map[string]any `json:"outputs"`
	Attempts []struct {
		Number int    `json:"number"`
		Agent  string `json:"agent"`
		State  string `json:"state"`
	} `json:"attempts"`
}

func (s runState) cue(id string) cueStatus {
	for _, c := range s.Cues {
		if c.ID == id {
			return c
		}
	}
	return cueStatus{}
}

// states lists every cue's state, for failure messages.
func (s runState) states() string {
	var b strings.Builder
	for _, c := range s.Cues {
		fmt.Fprintf(&b, " %s=%s", c.ID, c.State)
		if c.Reason != "" && c.State != "completed" {
			fmt.Fprintf(&b, "(%s)", c.Reason)
		}
	}
	return b.String()
}

// status is run ref's status, through orch status.
func (c *ctl) status(ref string) runState {
	c.t.Helper()
	stdout, _ := c.mustOrch(0, "status", ref, "--output", "json")
	var s runState
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		c.t.Fatalf("orch status %s --output json: %v\n%s", ref, err, stdout)
	}
	return s
}

// waitFor polls cond every 25ms until it holds; past timeout it fails the
// test, saying what it waited for.
func (c *ctl) waitFor(timeout time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// waitInGo waits until every listed cue of the last run is in GO, while the
// owner p is still running (if it ends first, the test fails with its output).
func (c *ctl) waitInGo(p *orchProc, timeout time.Duration, cues ...string) {
	c.t.Helper()
	want := map[string]string{}
	for _, id := range cues {
		want[id] = "go"
	}
	c.waitStates(p, timeout, want)
}

// waitStates waits until the cues of the last run are in the states want
// gives (cue -> state), while the owner p is still running.
func (c *ctl) waitStates(p *orchProc, timeout time.Duration, want map[string]string) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if p.exited() {
			c.t.Fatalf("orch ended (exit %d) before the cues were %v\n%s", p.code, want, p.output())
		}
		if _, err := os.Stat(c.db); err == nil {
			if code, stdout, _ := c.orch("status", "last", "--output", "json"); code == 0 {
				var s runState
				if json.Unmarshal([]byte(stdout), &s) == nil {
					all := true
					for id, state := range want {
						all = all && s.cue(id).State == state
					}
					if all {
						return
					}
				}
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %s waiting for the cues to be %v\n%s", timeout, want, p.output())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// integrityCheck runs PRAGMA integrity_check on the database file.
func integrityCheck(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res []string
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		t.Fatalf("PRAGMA integrity_check on %s: %v", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		res = append(res, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0] != "ok" {
		t.Errorf("PRAGMA integrity_check on %s: %q, want \"ok\"", path, res)
	}
}

// procAlive reports whether pid is a live process (not a zombie) of this
// test: it carries the test's mark. A zombie is dead: its parent just has
// not collected it.
func (c *ctl) procAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false // gone meanwhile (or not ours to read: not ours)
	}
	return bytes.Contains(env, []byte("\x00"+markVar+"="+c.mark+"\x00")) || bytes.HasPrefix(env, []byte(markVar+"="+c.mark+"\x00"))
}

// marked lists the live processes that carry the test's mark.
func (c *ctl) marked() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if c.procAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// describe says what a process is, for failure messages.
func describe(pid int) string {
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return fmt.Sprintf("pid %d [%s] stat: %s", pid, strings.ReplaceAll(strings.TrimSpace(string(cmdline)), "\x00", " "), strings.TrimSpace(string(stat)))
}

// readPids reads the pids written one per line (or separated by blanks) in
// the files matching glob in the test's directory.
func (c *ctl) readPids(glob string) []int {
	c.t.Helper()
	files, _ := filepath.Glob(c.path(glob))
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			c.t.Fatal(err)
		}
		for _, w := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(w)
			if err != nil {
				c.t.Fatalf("%s: %q is not a pid", f, w)
			}
			out = append(out, pid)
		}
	}
	return out
}

// alive lists which of pids, and of the other processes carrying the
// test's mark (agents and what they started), are still alive. The orch
// processes the test started are not counted unless listed.
func (c *ctl) alive(pids []int) []int {
	c.mu.Lock()
	seen := maps.Clone(c.orchs)
	c.mu.Unlock()
	for _, pid := range pids {
		delete(seen, pid)
	}
	var out []int
	for _, pid := range append(append([]int(nil), pids...), c.marked()...) {
		if !seen[pid] && c.procAlive(pid) {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}

// interval is one cue's GO as its agent saw it, or as the event log says.
type interval struct {
	cue        string
	start, end int64
}

// agentIntervals reads an agents' log of "NANOS start CUE" and "NANOS end
// CUE" lines (several attempts of one cue would be several intervals).
func (c *ctl) agentIntervals(name string) []interval {
	c.t.Helper()
	b, err := os.ReadFile(c.path(name))
	if err != nil {
		c.t.Fatal(err)
	}
	open := map[string]int64{}
	var out []interval
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			c.t.Fatalf("%s: malformed line %q", name, line)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			c.t.Fatalf("%s: malformed line %q", name, line)
		}
		switch f[1] {
		case "start":
			open[f[2]] = ns
		case "end":
			out = append(out, interval{f[2], open[f[2]], ns})
			delete(open, f[2])
		}
	}
	for cue, start := range open {
		c.t.Errorf("%s: %s started at %d and never ended", name, cue, start)
	}
	return out
}

// eventIntervals turns the event log into each cue's holding interval,
// measured in sequence numbers: a cue holds what it claims from its
// cue/state "go" event to its next cue/state event (the end of its GO).
func eventIntervals(events []event) []interval {
	open := map[string]int64{}
	var out []interval
	for _, e := range events {
		if e.Type != "cue/state" {
			continue
		}
		if start, ok := open[e.Cue]; ok {
			out = append(out, interval{e.Cue, start, e.Seq})
			delete(open, e.Cue)
		}
		if e.State == "go" {
			open[e.Cue] = e.Seq
		}
	}
	for cue, start := range open {
		out = append(out, interval{cue, start, 1 << 62}) // never ended: holds to the end
	}
	return out
}

// maxOverlap is the largest number of intervals open at one moment, and
// the cues open then. An interval that ends at the moment another starts
// does not overlap it.
func maxOverlap(ivs []interval) (int, []string) {
	type edge struct {
		at    int64
		delta int
		cue   string
	}
	var edges []edge
	for _, iv := range ivs {
		edges = append(edges, edge{iv.start, +1, iv.cue}, edge{iv.end, -1, iv.cue})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at != edges[j].at {
			return edges[i].at < edges[j].at
		}
		return edges[i].delta < edges[j].delta // ends first
	})
	n, best := 0, 0
	open := map[string]int{}
	var at []string
	for _, e := range edges {
		n += e.delta
		open[e.cue] += e.delta
		if n > best {
			best, at = n, nil
			for cue, k := range open {
				for ; k > 0; k-- {
					at = append(at, cue)
				}
			}
			sort.Strings(at)
		}
	}
	return best, at
}

var runIDRe = regexp.MustCompile(`run ([0-9a-f]{12}) `)

// runID finds the run id in orch run's verdict line.
func runID(t *testing.T, p *orchProc) string {
	t.Helper()
	m := runIDRe.FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("no run id in the output\n%s", p.output())
	}
	return m[1]
}
