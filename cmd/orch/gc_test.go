package main

import (
	"bytes"
	"runtime/debug"
	"testing"
)

// TestGCPolicy: the collector is tuned for a run and for validate and plan,
// by the root command alone, and left alone elsewhere or when GOGC says otherwise.
func TestGCPolicy(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	root := newRootCmd(newFactory(&streams{in: &bytes.Buffer{}, out: &bytes.Buffer{}, err: &bytes.Buffer{}}))
	for _, c := range []struct {
		args    []string
		gogc    string
		percent int
		limit   int64
	}{
		{[]string{"run"}, "", 400, runSoftMemory},
		{[]string{"resume"}, "", 400, runSoftMemory},
		{[]string{"retry"}, "", 400, runSoftMemory},
		{[]string{"validate"}, "", 400, specSoftMemory},
		{[]string{"plan"}, "", 100, specSoftMemory},
		{[]string{"status"}, "", 100, -1},
		{[]string{"bb", "set"}, "", 100, -1},
		{[]string{"run"}, "50", 100, runSoftMemory},
	} {
		t.Setenv("GOGC", c.gogc)
		t.Setenv("GOMEMLIMIT", "")
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(1 << 62)
		cmd, _, err := root.Find(c.args)
		if err != nil {
			t.Fatal(err)
		}
		root.PersistentPreRun(cmd, nil)
		limit := debug.SetMemoryLimit(-1)
		if limit == 1<<62 {
			limit = -1
		}
		if got := debug.SetGCPercent(100); got != c.percent || limit != c.limit {
			t.Errorf("%v with GOGC=%q: GC percent %d, limit %d; want %d, %d", c.args, c.gogc, got, limit, c.percent, c.limit)
		}
	}
}
