//go:build unix

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/orch-cli/orch/internal/fakeacp"
	"github.com/orch-cli/orch/internal/fakeagent"
	"github.com/orch-cli/orch/internal/fakeclaude"
	"github.com/orch-cli/orch/internal/fakecodex"
	"github.com/orch-cli/orch/internal/scriptagent"
	"github.com/orch-cli/orch/internal/testfs"
)

var update = flag.Bool("update", false, "rewrite golden files and testscript expectations")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"orch":       func() { os.Exit(run(os.Args[1:], stdio())) },
		"fake-agent": func() { os.Exit(fakeagent.Main(os.Args[1:])) },
		// fake-acp is an Agent Client Protocol agent (internal/fakeacp).
		"fake-acp": func() { os.Exit(fakeacp.Main(os.Args[1:])) },
		// claude and codex are the headless coding CLIs faked
		// (internal/fakeclaude, internal/fakecodex).
		"claude": func() { os.Exit(fakeclaude.Main(os.Args[1:])) },
		"codex":  func() { os.Exit(fakecodex.Main(os.Args[1:])) },
		// script-agent runs the script in its task (internal/scriptagent).
		"script-agent": func() { os.Exit(scriptagent.Main(os.Args[1:])) },
		// orch-fixture builds run database states (fixture_test.go).
		"orch-fixture": func() { os.Exit(fixtureMain(os.Args[1:])) },
		// orch-bench-writer appends events as fast as asked (serve_bench_test.go).
		"orch-bench-writer": func() { os.Exit(benchWriterMain(os.Args[1:])) },
		// orch-hold-lock holds the database's write lock (lockholder_test.go).
		"orch-hold-lock": func() { os.Exit(lockHolderMain(os.Args[1:])) },
		// orch-idle-conns holds idle connections to a server (serve_guard_test.go).
		"orch-idle-conns": func() { os.Exit(idleConnsMain(os.Args[1:])) },
	})
}

// TestScripts runs testdata/script/*.txtar through the real command line.
// Regenerate expected output with: go test ./cmd/orch -run TestScripts -update
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("..", "..", "testdata", "script"),
		UpdateScripts: *update,
		Cmds:          map[string]func(ts *testscript.TestScript, neg bool, args []string){"gen": cmdGen, "waitfor": cmdWaitFor, "gone": cmdGone, "seqs": cmdSeqs},
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "")
			env.Setenv("ORCH_DB", filepath.Join(env.WorkDir, ".orch", "orch.db"))
			examples, _ := filepath.Abs(filepath.Join("..", "..", "examples"))
			env.Setenv("EXAMPLES", examples)
			return nil
		},
	})
}

// runOrch runs one command line in-process and returns its exit code and output.
func runOrch(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if dir != "" {
		t.Chdir(dir)
	}
	var out, errb bytes.Buffer
	code = run(args, &streams{in: bytes.NewReader(nil), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	return testfs.Write(t, files, 0o644)
}

// cmdGen writes a file txtar cannot hold or that would be too big to keep:
//
//	gen bom|nul|badutf8|bomb|deep FILE
//	gen big FILE BYTES        a valid agent padded with comments to BYTES
//	gen manykeys FILE N       an agent whose env has N keys
func cmdGen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: gen KIND FILE [N]")
	}
	n := 0
	if len(args) > 2 {
		var err error
		if n, err = strconv.Atoi(args[2]); err != nil {
			ts.Fatalf("gen: %v", err)
		}
	}
	var b strings.Builder
	switch args[0] {
	case "bom":
		b.WriteString("\xef\xbb\xbfagent:\n  id: bom\n  command: [sh]\n")
	case "nul":
		b.WriteString("agent:\n  id: nul\x00\n  command: [x]\n")
	case "badutf8":
		b.WriteString("agent:\n  id: utf8\n  description: caf\xe9\n  command: [x]\n")
	case "bomb": // "billion laughs": 9^9 strings from a few hundred bytes
		b.WriteString("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
		for i := 1; i < 9; i++ {
			p, c := string(rune('a'+i-1)), string(rune('a'+i))
			fmt.Fprintf(&b, "%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", c, c, p, p, p, p, p, p, p, p, p)
		}
		b.WriteString("agent: {id: bomb, command: [x], env: *i}\n")
	case "deep":
		b.WriteString("agent:\n  id: deep\n  command: [x]\n  description: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n")
	case "big":
		b.WriteString("agent:\n  id: big\n  command: [sh]\n")
		for b.Len() < n {
			b.WriteString("# padding padding padding padding padding padding padding padding\n")
		}
	case "manykeys":
		b.WriteString("agent:\n  id: many\n  command: [sh]\n  env:\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "    K%d: v\n", i)
		}
	default:
		ts.Fatalf("gen: unknown kind %q", args[0])
	}
	if err := os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644); err != nil {
		ts.Fatalf("gen: %v", err)
	}
}
