//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/store"
)

// TestExamplesREADME runs the orch commands of every examples README as
// written, in order, in a copy of examples/ with no database yet: each
// must exit 0, or the code its comment says ("# ...: exit 3"). A `cd DIR`
// line moves on as in a shell, for the rest of that README; other commands
// (python3, echo) are illustrations and are not run. Only code blocks at
// the start of a line count: an indented one, inside a list, shows what to
// type elsewhere (orch answer from another shell), which a person plays
// here for every run (answerQuestions, answer "0").
func TestExamplesREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example")
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	readmes, _ := filepath.Glob(filepath.Join(src, "*", "README.md"))
	readmes = append([]string{filepath.Join(src, "README.md")}, readmes...)
	t.Setenv("ORCH_DB", "") // found as a person's shell finds it
	t.Setenv("NO_COLOR", "1")
	for _, readme := range readmes {
		rel, _ := filepath.Rel(src, readme)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			root := t.TempDir()
			copyTree(t, src, filepath.Join(root, "examples"))
			// A Go agent (spawn's lead, go run) builds in the module.
			repo := filepath.Dir(src)
			for _, p := range []string{"go.mod", "go.sum", "protocols", "internal"} {
				copyTree(t, filepath.Join(repo, p), filepath.Join(root, p))
			}
			if needsRepository(t, filepath.Dir(readme)) {
				gitRepository(t, root)
			}
			cmds := readmeCommands(t, readme)
			if len(cmds) == 0 && filepath.Base(filepath.Dir(readme)) != "lib" {
				t.Fatalf("no orch command in %s", readme)
			}
			dir := root
			for _, c := range cmds {
				if c.cd != "" {
					dir = filepath.Join(dir, c.cd)
					continue
				}
				runREADMECommand(t, root, dir, c)
			}
		})
	}
}

type readmeCommand struct {
	line string // a shell command line beginning with orch
	cd   string // or a directory to move to
	exit int    // the exit status the README says
	at   int    // its line number
}

var exitComment = regexp.MustCompile(`#.*\bexit (\d+)\b`)

// readmeCommands reads the orch and cd lines of the top-level ```sh blocks.
func readmeCommands(t *testing.T, path string) []readmeCommand {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeCommand
	in := false
	var pending string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "```sh":
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		case !in:
			continue
		}
		if strings.HasSuffix(line, `\`) {
			pending += strings.TrimSuffix(line, `\`)
			continue
		}
		line, pending = strings.TrimSpace(pending+line), ""
		switch {
		case strings.HasPrefix(line, "cd "):
			out = append(out, readmeCommand{cd: strings.TrimSpace(strings.TrimPrefix(line, "cd ")), at: n})
		case strings.HasPrefix(line, "orch "):
			c := readmeCommand{line: line, at: n}
			if m := exitComment.FindStringSubmatch(line); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
			}
			out = append(out, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// runREADMECommand runs one command line of an examples README, answering
// the person's questions of the run it starts, and checks its exit status.
func runREADMECommand(t *testing.T, root, dir string, c readmeCommand) {
	t.Helper()
	code, out := runShell(t, dir, c.line, "0")
	if code != c.exit {
		rel, _ := filepath.Rel(root, dir)
		t.Errorf("line %d, in %s: %s\nexit %d, the README says %d\n%s", c.at, rel, c.line, code, c.exit, out)
	}
}

// runShell runs a command line through sh in dir (orch is on PATH: TestMain
// puts this test binary there under that name) and returns its exit status
// and output. When it is an orch run and answer is not empty, every question
// of the run for the person gets answer, as someone at another shell would.
func runShell(t *testing.T, dir, line, answer string) (int, []byte) {
	t.Helper()
	if fields := strings.Fields(line); answer != "" && len(fields) > 2 && fields[0] == "orch" && fields[1] == "run" {
		db := filepath.Join(exampleProject(dir, filepath.Join(dir, fields[2])), ".orch", "orch.db")
		defer answerQuestions(t, db, answer)()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out
	} else if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return 0, out
}

// exampleProject is the directory whose .orch/ orch run uses, run in dir
// with this cuelist (runDBPath, without --db or ORCH_DB).
func exampleProject(dir, cuelist string) string {
	if found, ok := store.FindProjectDir(dir); ok {
		return found
	}
	if found, ok := store.FindProjectDir(filepath.Dir(cuelist)); ok {
		return found
	}
	return filepath.Dir(cuelist)
}

// copyTree copies the file or directory src to dst, leaving out run
// databases.
func copyTree(t *testing.T, src, dst string) {
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && path != src && (d.Name() == ".orch" || d.Name() == "__pycache__") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}
