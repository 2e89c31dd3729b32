//go:build unix

package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orch-cli/orch/internal/testfs"
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// project writes files (scripts made executable) and compiles cuelist.yaml.
func project(t testing.TB, files map[string]string) (*planner.Plan, string) {
	t.Helper()
	dir := testfs.Write(t, files, 0o755)
	_, p, diags, err := planner.Compile(filepath.Join(dir, "cuelist.yaml"), "", spec.LoadOptions{})
	if err != nil || p == nil {
		t.Fatalf("compile: %v\n%v", err, diags)
	}
	return p, dir
}

func runPlan(t *testing.T, p *planner.Plan, rec *memRecorder, mod func(*Options)) *Result {
	t.Helper()
	opts := Options{Plan: p, Recorder: rec, Inputs: p.Cuelist.Inputs, KillGrace: 300 * time.Millisecond}
	if mod != nil {
		mod(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

func wantStates(t *testing.T, rec *memRecorder, want map[string]string) {
	t.Helper()
	got := rec.cueStates()
	for cue, s := range want {
		if got[cue] != s {
			t.Errorf("cue %s is %q, want %q (all: %v)", cue, got[cue], s, got)
		}
	}
}

func reasonOf(rec *memRecorder, cue string) string {
	r := ""
	for _, e := range rec.of(record.EvCueState) {
		if e.Cue == cue {
			r = e.Reason
		}
	}
	return r
}

const agentsHead = "cuelist:\n  id: t\n  include: [agents.yaml]\n"

func TestChainOutputsFlowAndExports(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  inputs: {release: "1.4"}
  cues:
    - {id: BUILD, agents: [build], exports: [artifact]}
    - {id: TEST, agents: [test], dependencies: [BUILD]}
    - {id: SHIP, agents: [ship], dependencies: [TEST], inputs: {target: staging}}
`,
		"agents.yaml": `agent: {id: build, command: [sh, build.sh], provides: [artifact]}
---
agent: {id: test, command: [sh, test.sh], requires: [artifact], provides: [report]}
---
agent: {id: ship, command: [sh, ship.sh], requires: [artifact, report, target], provides: [url]}
`,
		"build.sh": `echo "artifact=app-$ORCH_INPUT_RELEASE.tar" >> "$ORCH_OUTPUT"; echo building >&2`,
		"test.sh":  `read -r task; case "$task" in *'"artifact":"app-1.4.tar"'*) echo 'report=ok' >> "$ORCH_OUTPUT";; *) exit 3;; esac`,
		"ship.sh":  `printf '{"url": "https://%s/%s"}' "$ORCH_INPUT_TARGET" "$ORCH_INPUT_ARTIFACT" > "$ORCH_OUTPUT"`,
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	ends := rec.of(record.EvCueState)
	last := ends[len(ends)-1]
	if !strings.Contains(dataJSON(last.Data), "https://staging/app-1.4.tar") {
		t.Errorf("SHIP outputs %s", dataJSON(last.Data))
	}
	if e, ok, _ := rec.BlackboardRead(context.Background(), res.RunID, "artifact"); !ok || string(e.Value) != `"app-1.4.tar"` || e.Author != "build" {
		t.Errorf("export: %+v %v", e, ok)
	}
	var logged bool
	for _, l := range rec.logs {
		logged = logged || (l.Cue == "BUILD" && l.Stream == "stderr" && l.Text == "building")
	}
	if !logged {
		t.Error("stderr was not logged")
	}
}

func TestRetryThenSuccessAndFallback(t *testing.T) {
	p, dir := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: FLAKY, agents: [flaky]}
    - {id: BROKEN, agents: [broken]}
`,
		"agents.yaml": `agent: {id: flaky, command: [sh, flaky.sh], retry: {max_attempts: 3, backoff: 10ms, retry_on: ["exit:75"]}}
---
agent: {id: broken, command: [sh, -c, "exit 75"], retry: {max_attempts: 2, backoff: 10ms, retry_on: ["exit:75"]}, fallback: [backup], cooldown: 1h}
---
agent: {id: backup, command: [sh, -c, "echo backup >&2"]}
`,
		"flaky.sh": `n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; [ $n -ge 2 ] || exit 75`,
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	var flaky, broken []string
	for _, e := range rec.of(record.EvAttemptEnded) {
		line := e.Agent + ":" + e.State
		if e.Cue == "FLAKY" {
			flaky = append(flaky, line)
		} else {
			broken = append(broken, line)
		}
	}
	if strings.Join(flaky, " ") != "flaky:failed flaky:completed" {
		t.Errorf("FLAKY attempts: %v", flaky)
	}
	// broken cools down for an hour after its first failure: its fallback
	// can start sooner than its own retry, so it takes over at once.
	if strings.Join(broken, " ") != "broken:failed backup:completed" {
		t.Errorf("BROKEN attempts: %v", broken)
	}
	var numbers []int
	for _, e := range rec.of(record.EvAttemptStarted) {
		if e.Cue == "BROKEN" {
			numbers = append(numbers, e.Attempt)
		}
	}
	if len(numbers) != 2 || numbers[1] != 2 {
		t.Errorf("attempt numbers continue across a fallback: %v", numbers)
	}
	if until, _ := rec.CooldownUntil(context.Background(), "broken"); until.Before(time.Now().Add(50 * time.Minute)) {
		t.Errorf("broken is not cooling down: %v", until)
	}
	_ = dir
}

func TestContractBlockedAndIndependentBranch(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: A, agents: [liar]}
    - {id: B, agents: [ok], dependencies: [A]}
    - {id: C, agents: [ok], dependencies: [B]}
    - {id: SIDE, agents: [ok]}
`,
		"agents.yaml": `agent: {id: liar, command: [sh, -c, "echo other=1 >> $ORCH_OUTPUT"], provides: [promised]}
---
agent: {id: ok, command: [sh, -c, "true"], concurrency: 4}
`,
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunFailed {
		t.Fatalf("run %s", res.State)
	}
	wantStates(t, rec, map[string]string{"A": "failed", "B": "blocked", "C": "blocked", "SIDE": "completed"})
	if r := reasonOf(rec, "A"); r != "liar: contract violation: did not provide promised" {
		t.Errorf("A: %q", r)
	}
	if r := reasonOf(rec, "C"); r != "dependency B is blocked" {
		t.Errorf("C: %q", r)
	}
}

func TestConditionSkips(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: CHECK, agents: [check], exports: [tests_passed]}
    - {id: DEPLOY, agents: [ok], dependencies: [CHECK], conditions: [tests_passed]}
    - {id: AFTER, agents: [ok], dependencies: [DEPLOY]}
`,
		"agents.yaml": `agent: {id: check, command: [sh, -c, "echo tests_passed=false >> $ORCH_OUTPUT"], provides: [tests_passed]}
---
agent: {id: ok, command: ["true"]}
`,
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	wantStates(t, rec, map[string]string{"CHECK": "completed", "DEPLOY": "skipped", "AFTER": "blocked"})
	if r := reasonOf(rec, "DEPLOY"); r != `condition tests_passed does not hold: "false"` {
		t.Errorf("reason %q", r)
	}
	if r := reasonOf(rec, "AFTER"); r != "dependency DEPLOY was skipped" {
		t.Errorf("AFTER: %q", r)
	}
	if res.State != record.RunCompleted {
		t.Errorf("a skipped cue does not fail the run: %s", res.State)
	}
}

// TestTimeoutKillsEverything: an agent that hangs with a background child and
// a setsid grandchild is killed at its timeout, and no process is left.
func TestTimeoutKillsEverything(t *testing.T) {
	needSetsid(t)
	p, dir := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: HANG, agents: [hang], timeout: 300ms}
`,
		"agents.yaml": `agent: {id: hang, command: [sh, hang.sh]}`,
		"hang.sh": `sleep 60 & echo $! > child.pid
setsid sh -c 'echo $$ > escaped.pid; sleep 60' &
trap '' TERM
sleep 60`,
	})
	rec := newMemRecorder()
	start := time.Now()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunFailed {
		t.Fatalf("run %s", res.State)
	}
	// Well under the agent's 60 s sleep (it was killed, not waited for),
	// and loose enough for a loaded machine under the race detector.
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("took %s", el)
	}
	if r := reasonOf(rec, "HANG"); r != "hang: command did not finish within 300ms" {
		t.Errorf("reason %q", r)
	}
	for _, f := range []string{"child.pid", "escaped.pid"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pid := atoi(strings.TrimSpace(string(b)))
		if alive(pid) {
			t.Errorf("%s (pid %d) is still running", f, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	var escapedNoted bool
	for _, e := range rec.of(record.EvNote) {
		escapedNoted = escapedNoted || strings.Contains(e.Reason, "escaped its process group")
	}
	if !escapedNoted {
		t.Error("the escaped grandchild was not reported")
	}
}

func TestManualGoPausesThenContinues(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: BUILD, agents: [ok]}
    - {id: DEPLOY, agents: [ok], dependencies: [BUILD], go: manual}
    - {id: DOCS, agents: [ok]}
`,
		"agents.yaml": `agent: {id: ok, command: ["true"], concurrency: 3}`,
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunPaused || strings.Join(res.Waiting, ",") != "DEPLOY" {
		t.Fatalf("run %s waiting %v", res.State, res.Waiting)
	}
	wantStates(t, rec, map[string]string{"BUILD": "completed", "DOCS": "completed", "DEPLOY": "pending"})

	// orch go: the command arrives through the store; the run is continued.
	rec.commands = append(rec.commands, record.Command{ID: 1, RunID: res.RunID, Kind: "go", Cue: "DEPLOY"})
	resume := &record.RunRecord{ID: res.RunID, State: record.RunPaused, Cues: map[string]record.CueRecord{
		"BUILD": {State: record.CueCompleted, Attempts: 1}, "DOCS": {State: record.CueCompleted, Attempts: 1}, "DEPLOY": {State: record.CuePending}}}
	res = runPlan(t, p, rec, func(o *Options) { o.RunID, o.Resume = res.RunID, resume })
	if res.State != record.RunCompleted {
		t.Fatalf("continued run %s: %s", res.State, res.Reason)
	}
	wantStates(t, rec, map[string]string{"DEPLOY": "completed"})
}

func TestApproveAtTerminal(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + "  cues:\n    - {id: DEPLOY, agents: [ok], go: manual}\n",
		"agents.yaml":  `agent: {id: ok, command: ["true"]}`,
	})
	rec := newMemRecorder()
	var asked []string
	res := runPlan(t, p, rec, func(o *Options) {
		o.Approve = func(_ context.Context, cue string, _ []string) bool { asked = append(asked, cue); return true }
	})
	if res.State != record.RunCompleted || strings.Join(asked, ",") != "DEPLOY" {
		t.Fatalf("run %s, asked %v", res.State, asked)
	}
}

// TestEarlyWarning: the dependent's prepare runs while its dependency is
// still in GO.
func TestEarlyWarning(t *testing.T) {
	p, dir := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: FIRST, agents: [slow]}
    - {id: SECOND, agents: [prep], dependencies: [FIRST]}
`,
		"agents.yaml": `agent: {id: slow, command: [sh, -c, "sleep 0.5; date +%s%N > first.done"]}
---
agent: {id: prep, command: ["true"], prepare: [sh, -c, "date +%s%N > second.prepared"]}
`,
	})
	rec := newMemRecorder()
	if res := runPlan(t, p, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	done := readNanos(t, filepath.Join(dir, "first.done"))
	prepared := readNanos(t, filepath.Join(dir, "second.prepared"))
	if prepared >= done {
		t.Errorf("SECOND prepared %s after FIRST was done", time.Duration(prepared-done))
	}
}

func readNanos(t *testing.T, path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return int64(atoi(strings.TrimSpace(string(b))))
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil && !zombie(pid)
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestOutputLoggedInFull: a plain agent's end is reported as soon as its
// process is gone, but the run ends only once everything it printed is
// logged, in order, on each stream: more than a pipe holds, a last line
// without a newline, and a line printed after the agent exited by a
// grandchild that left its process group and holds its stdout (it gets the
// grace period; the run's sweep then stops it).
func TestOutputLoggedInFull(t *testing.T) {
	needSetsid(t)
	p, dir := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: TALK, agents: [talk]}
`,
		"agents.yaml": `agent: {id: talk, command: [sh, talk.sh]}`,
		"talk.sh": `i=0
while [ $i -lt 3000 ]; do echo "line $i of stdout, padded to be long enough to fill a pipe"; i=$((i+1)); done > lines
cat lines lines lines lines lines lines lines lines lines lines
echo "to stderr" >&2
setsid sh -c 'echo $$ > late.pid; sleep 0.1; echo late >&2; exec sleep 30' &
while [ ! -s late.pid ]; do sleep 0.01; done
printf 'no newline'`,
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunCompleted {
		t.Fatalf("run %s", res.State)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "late.pid")); err != nil || alive(atoi(strings.TrimSpace(string(b)))) {
		t.Errorf("the grandchild was not stopped (%v)", err)
	}
	var out []string
	var errs []string
	for _, l := range rec.logs {
		if l.Cue != "TALK" {
			continue
		}
		if l.Stream == "stderr" {
			errs = append(errs, l.Text)
		} else {
			out = append(out, l.Text)
		}
	}
	if len(out) != 30001 {
		t.Fatalf("%d stdout lines logged, want 30001", len(out))
	}
	for i := range 30000 {
		if want := "line " + itoa(i%3000) + " of stdout, padded to be long enough to fill a pipe"; out[i] != want {
			t.Fatalf("stdout line %d: %q, want %q", i, out[i], want)
		}
	}
	if out[30000] != "no newline" {
		t.Errorf("the last line without a newline is %q", out[30000])
	}
	if strings.Join(errs, "|") != "to stderr|late" {
		t.Errorf("stderr %q", errs)
	}
}

// TestLargeOutputReachesPlainAgent: a value over the environment's limit
// (Linux refuses one string over 128 KiB) reaches a downstream plain agent
// through ORCH_INPUT_<NAME>_FILE, small ones still in ORCH_INPUT_<NAME>;
// the file's directory is gone once the attempt has ended.
func TestLargeOutputReachesPlainAgent(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  inputs: {small: hi}
  cues:
    - {id: MAKE, agents: [make]}
    - {id: READ, agents: [read], dependencies: [MAKE]}
    - {id: GONE, agents: [gone], dependencies: [READ]}
`,
		"agents.yaml": `agent: {id: make, command: [sh, make.sh], provides: [big]}
---
agent: {id: read, command: [sh, read.sh], requires: [big]}
---
agent: {id: gone, run: '[ -n "$ORCH_INPUT_INDIR" ] && [ ! -e "$ORCH_INPUT_INDIR" ]'}
`,
		// 1,000,000 bytes: the output file itself is capped at 1 MiB.
		"make.sh": `printf 'big=' > "$ORCH_OUTPUT"; head -c 1000000 /dev/zero | tr '\0' x >> "$ORCH_OUTPUT"`,
		"read.sh": `[ -z "${ORCH_INPUT_BIG+set}" ] || exit 4
[ "$ORCH_INPUT_SMALL" = hi ] || exit 5
printf 'size=%s\n' "$(wc -c < "$ORCH_INPUT_BIG_FILE" | tr -d ' ')" >> "$ORCH_OUTPUT"
printf 'head=%s\n' "$(head -c 3 "$ORCH_INPUT_BIG_FILE")" >> "$ORCH_OUTPUT"
printf 'indir=%s\n' "$(dirname "$ORCH_INPUT_BIG_FILE")" >> "$ORCH_OUTPUT"`,
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	var read string
	for _, e := range rec.of(record.EvCueState) {
		if e.Cue == "READ" && e.State == string(record.CueCompleted) {
			read = dataJSON(e.Data)
		}
	}
	if !strings.Contains(read, `"size":"1000000"`) || !strings.Contains(read, `"head":"xxx"`) {
		t.Errorf("READ ended with %s", read)
	}
}

// TestLogCap: an attempt that prints far more than defaults.max_log costs
// the store at most max_log: its first and last lines are kept, with a line
// saying what was dropped between them.
func TestLogCap(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  defaults: {max_log: 64KiB}
  cues:
    - {id: LOUD, agents: [loud]}
`,
		"agents.yaml": `agent: {id: loud, run: 'seq 1 50000 | sed "s/^/line /" >&2; echo done'}` + "\n",
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	var cost int64
	var stderr []string
	var note string
	kept := 0
	for _, l := range rec.logs {
		if strings.HasPrefix(l.Text, "…") {
			note = l.Text
			continue
		}
		cost += int64(len(l.Text)) + logRowCost
		kept++
		if l.Stream == "stderr" {
			stderr = append(stderr, l.Text)
		}
	}
	if cost > 64<<10 {
		t.Errorf("the log costs %d bytes, over max_log (64 KiB)", cost)
	}
	if len(stderr) < 100 || stderr[0] != "line 1" || stderr[len(stderr)-1] != "line 50000" {
		t.Fatalf("kept %d stderr lines, from %q to %q", len(stderr), stderr[0], stderr[len(stderr)-1])
	}
	dropped := 50001 - kept // with "done" on stdout
	want := fmt.Sprintf("(%s) dropped: the log keeps the first and the last 32.0 KiB of each attempt (defaults.max_log 64.0 KiB)", record.Plural(int64(dropped), "line"))
	if !strings.Contains(note, want) {
		t.Errorf("note %q, want it to say %q", note, want)
	}
}

// TestTaskOnStdin: a plain agent's task comes whole on stdin, a small one
// and one larger than a pipe holds alike; an agent that never reads a large
// task still ends, and so does its attempt.
func TestTaskOnStdin(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: SMALL, agents: [reader]}
    - {id: BIG, agents: [reader], inputs: {big: ` + big + `}}
    - {id: DEAF, agents: [deaf], inputs: {big: ` + big + `}}
`,
		"agents.yaml": `agent: {id: reader, provides: [n, last], run: 'cat > "$ORCH_OUTPUT.task"; printf "n=%s\nlast=%s\n" "$(wc -c < "$ORCH_OUTPUT.task" | tr -d " ")" "$(tail -c 1 "$ORCH_OUTPUT.task")" >> "$ORCH_OUTPUT"'}
---
agent: {id: deaf, run: 'true'}
`,
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	sizes := map[string]int{}
	for _, e := range rec.of(record.EvCueState) {
		if e.State != string(record.CueCompleted) || e.Cue == "DEAF" {
			continue
		}
		out := e.Data.(record.CueStateData).Outputs
		if out["last"] != "}" {
			t.Errorf("%s's task on stdin does not end its JSON object: it ends with %q", e.Cue, out["last"])
		}
		n, _ := strconv.Atoi(fmt.Sprint(out["n"]))
		sizes[e.Cue] = n
	}
	if sizes["SMALL"] < 50 || sizes["SMALL"] > 512 || sizes["BIG"] < len(big) {
		t.Errorf("task sizes on stdin %v: want SMALL under 512 bytes and BIG over %d", sizes, len(big))
	}
}

// TestTimeoutOfAgentDeafToLargeTask: an agent that never reads a task larger
// than a pipe holds, and hangs, is still stopped at its timeout: writing its
// task never holds the attempt up.
func TestTimeoutOfAgentDeafToLargeTask(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: DEAF, agents: [deaf], timeout: 300ms, inputs: {big: ` + strings.Repeat("x", 100_000) + `}}
`,
		"agents.yaml": `agent: {id: deaf, command: [sleep, "60"]}`,
	})
	rec := newMemRecorder()
	res := runPlan(t, p, rec, nil)
	if res.State != record.RunFailed {
		t.Fatalf("run %s", res.State)
	}
	if r := reasonOf(rec, "DEAF"); r != "deaf: command did not finish within 300ms" {
		t.Errorf("reason %q", r)
	}
}
