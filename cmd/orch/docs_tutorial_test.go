//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTutorial runs docs/tutorial.md as a newcomer would, in a fresh
// directory: each file it shows (a code block after <!-- file: NAME -->) is
// written, each command of its console blocks ($ lines) is run through sh
// (orch is this test binary, on PATH), and must exit 0, or the code its
// comment says (# exit 3), and print every line the page shows under it
// (times, run ids, hashes and durations aside; "..." stands for lines left
// out). A console block after <!-- the person answers: TEXT --> has the
// person answer every question of its runs with TEXT, as someone at the
// terminal or at another shell would.
func TestTutorial(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tutorial")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the tutorial needs git")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("the tutorial needs python3")
	}
	runLiterateDoc(t, filepath.Join("docs", "tutorial.md"), 15)
}

// TestREADMEExample runs the README's example as TestTutorial runs the
// tutorial: its file, then its commands, each checked against the output
// the README shows.
func TestREADMEExample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's example")
	}
	runLiterateDoc(t, "README.md", 4)
}

// runLiterateDoc runs the files and commands of the page at path (relative
// to the repository) in a fresh directory; the page must have at least
// minSteps of them.
func runLiterateDoc(t *testing.T, path string, minSteps int) {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	steps := tutorialSteps(t, filepath.Join(src, path))
	if len(steps) < minSteps {
		t.Fatalf("found %d steps in %s, want at least %d", len(steps), path, minSteps)
	}
	t.Setenv("ORCH_SRC", src)
	t.Setenv("ORCH_DB", "")
	t.Setenv("NO_COLOR", "1")
	t.Setenv("LC_ALL", "C")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "You", "GIT_AUTHOR_EMAIL": "you@example.com", "GIT_COMMITTER_NAME": "You", "GIT_COMMITTER_EMAIL": "you@example.com"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	for _, s := range steps {
		switch {
		case s.file != "":
			if err := os.WriteFile(filepath.Join(dir, s.file), []byte(s.content), 0o644); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(s.command, "cd "):
			dir = filepath.Join(dir, strings.TrimSpace(strings.TrimPrefix(s.command, "cd ")))
		default:
			if !runTutorialStep(t, path, dir, s) {
				return // what follows builds on it
			}
		}
	}
}

type tutorialStep struct {
	at      int      // line in the page
	file    string   // a file to write, with content
	content string   //
	command string   // or a shell command line
	exit    int      // the exit status the page says
	want    []string // the lines the page shows it print
	answer  string   // what the person answers the run's questions
}

var (
	fileMarker   = regexp.MustCompile(`^<!-- file: (\S+) -->$`)
	personMarker = regexp.MustCompile(`^<!-- the person answers: (.+) -->$`)
)

// tutorialSteps reads the files and commands of the tutorial, in order.
func tutorialSteps(t *testing.T, path string) []tutorialStep {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steps []tutorialStep
	var file, answer string
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fileMarker.FindStringSubmatch(line); m != nil {
			file = m[1]
			continue
		}
		if m := personMarker.FindStringSubmatch(line); m != nil {
			answer = m[1]
			continue
		}
		if !strings.HasPrefix(line, "```") {
			continue
		}
		// A fenced block: its lines up to the closing fence.
		start := i + 1
		end := start
		for end < len(lines) && !strings.HasPrefix(lines[end], "```") {
			end++
		}
		block := lines[start:end]
		switch {
		case file != "":
			steps = append(steps, tutorialStep{at: start, file: file, content: strings.Join(block, "\n") + "\n"})
		case line == "```console":
			for j := 0; j < len(block); j++ {
				if !strings.HasPrefix(block[j], "$ ") {
					continue
				}
				s := tutorialStep{at: start + j + 1, command: strings.TrimPrefix(block[j], "$ "), answer: answer}
				if m := exitComment.FindStringSubmatch(s.command); m != nil {
					s.exit, _ = strconv.Atoi(m[1])
				}
				for j+1 < len(block) && !strings.HasPrefix(block[j+1], "$ ") {
					j++
					if strings.TrimSpace(block[j]) != "..." && strings.TrimSpace(block[j]) != "" {
						s.want = append(s.want, block[j])
					}
				}
				steps = append(steps, s)
			}
			answer = ""
		}
		file = ""
		i = end
	}
	return steps
}

// runTutorialStep runs one command in dir and checks its exit status and
// output; it says whether the tutorial can go on.
func runTutorialStep(t *testing.T, page, dir string, s tutorialStep) bool {
	t.Helper()
	code, out := runShell(t, dir, s.command, s.answer)
	ok := true
	if code != s.exit {
		t.Errorf("%s:%d: %s\nexit %d, the page says %d\n%s", page, s.at, s.command, code, s.exit, out)
		ok = false
	}
	got := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		got[normalizeOutput(sc.Text())] = true
	}
	for _, w := range s.want {
		if !got[normalizeOutput(w)] {
			t.Errorf("%s:%d: %s\nthe page shows the line\n  %s\nwhich it did not print:\n%s", page, s.at, s.command, w, out)
			ok = false
		}
	}
	return ok
}

var outputVariables = []struct {
	re  *regexp.Regexp
	out string
}{
	// A run continued more than a second after it started (a slow machine,
	// the race detector) also says how long its last part took.
	{regexp.MustCompile(` \(\S+ since it continued\)`), ""},
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?`), "DATE"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d\.\d{3}\b`), "TIME"},
	{regexp.MustCompile(`\b[0-9a-f]{12}\b`), "ID"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)(\d+(\.\d+)?(ms|s|m))*\b`), "DUR"},
	{regexp.MustCompile(`\s+`), " "},
}

// normalizeOutput takes out of a line what differs from run to run: times,
// ids and hashes, durations, and the width of columns.
func normalizeOutput(line string) string {
	for _, v := range outputVariables {
		line = v.re.ReplaceAllString(line, v.out)
	}
	return strings.TrimSpace(line)
}

// TestRecoverHowTo runs the walkthrough of docs/howto/recover-a-failed-run.md:
// a run that fails, orch retry --dry-run, the fix, orch retry.
func TestRecoverHowTo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the how-to")
	}
	runLiterateDoc(t, filepath.Join("docs", "howto", "recover-a-failed-run.md"), 5)
}
