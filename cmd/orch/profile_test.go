package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProfileWritesTrace: ORCH_TRACE names a file that gets an execution
// trace go tool trace reads (it starts with the trace header), and
// ORCH_CPUPROFILE a pprof profile (gzip), both written when orch ends.
func TestProfileWritesTrace(t *testing.T) {
	dir := t.TempDir()
	tracePath, cpuPath := filepath.Join(dir, "trace.out"), filepath.Join(dir, "cpu.prof")
	t.Setenv("ORCH_TRACE", tracePath)
	t.Setenv("ORCH_CPUPROFILE", cpuPath)
	profile(os.Stderr)()
	for path, head := range map[string][]byte{tracePath: []byte("go 1."), cpuPath: {0x1f, 0x8b}} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, head) {
			t.Errorf("%s starts with %q, want %q", filepath.Base(path), b[:min(len(b), 8)], head)
		}
	}
}
