package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestOrchDoesNotLinkTemporal: the Temporal client lives in orch-temporal;
// orch itself links neither go.temporal.io nor gRPC.
func TestOrchDoesNotLinkTemporal(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "go.temporal.io/") || strings.HasPrefix(dep, "google.golang.org/grpc") || strings.HasPrefix(dep, "google.golang.org/protobuf") {
			t.Errorf("cmd/orch links %s", dep)
		}
	}
}

// TestRunTemporalWithoutOrchTemporal: with no orch-temporal next to orch nor
// on PATH, orch run --engine temporal says how to install it (exit 2).
func TestRunTemporalWithoutOrchTemporal(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errOut bytes.Buffer
	code := run([]string{"run", "--engine", "temporal", "x.yaml"}, &streams{in: strings.NewReader(""), out: &out, err: &errOut})
	if code != exitUsage || !strings.Contains(errOut.String(), "needs orch-temporal: go install github.com/orch-cli/orch/cmd/orch-temporal@") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if engineOf([]string{"--engine=local"}) != "local" || !handsOver([]string{"worker"}) || handsOver([]string{"run", "x.yaml"}) {
		t.Fatal("engine selection")
	}
}
