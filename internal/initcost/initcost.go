// Package initcost measures what a package's init allocates, for the tests
// that keep orch's start cheap: every orch command runs the init of every
// package linked into it, whether the command uses the package or not, so
// what a package builds for later (schemas inferred, tables read by
// reflection) belongs in a sync.OnceValue, built at first use.
package initcost

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// Bytes is how many bytes pkg's package init allocates in the calling test
// binary: the binary is run again, with no test and GODEBUG=inittrace=1,
// and the runtime's line for pkg read.
func Bytes(t testing.TB, pkg string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running the test binary with GODEBUG=inittrace=1: %v\n%s", err, out)
	}
	n, err := parse(out, pkg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return n
}

// parse finds pkg's line in inittrace output: "init PKG @T ms, T ms clock,
// N bytes, M allocs". A package whose init has nothing to run has no line.
func parse(out []byte, pkg string) (int, error) {
	line := regexp.MustCompile(`(?m)^init ` + regexp.QuoteMeta(pkg) + ` @.* ([0-9]+) bytes, [0-9]+ allocs$`)
	m := line.FindSubmatch(out)
	if m == nil {
		if regexp.MustCompile(`(?m)^init `).Match(out) {
			return 0, nil // the runtime traced inits: pkg has none to run
		}
		return 0, fmt.Errorf("no init trace in the output")
	}
	return strconv.Atoi(string(m[1]))
}
