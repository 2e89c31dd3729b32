package proc

import (
	"encoding/binary"
	"os"
	"os/exec"
	"reflect"
	"testing"
)

// TestProcEnv: the environment is read from a kern.procargs2 buffer past
// the executable's path, its padding and the arguments.
func TestProcEnv(t *testing.T) {
	b := binary.LittleEndian.AppendUint32(nil, 2)
	b = append(b, "/bin/sh\x00\x00\x00\x00sh\x00-c\x00A=1\x00ORCH_ATTEMPT_TOKEN=r/cue/X/1/z\x00\x00apple=1\x00"...)
	var got []string
	for _, kv := range procEnv(b) {
		got = append(got, string(kv))
	}
	if want := []string{"A=1", "ORCH_ATTEMPT_TOKEN=r/cue/X/1/z"}; !reflect.DeepEqual(got, want) {
		t.Errorf("procEnv = %q, want %q", got, want)
	}
}

// TestAttemptTokenOfChild: a child started with a token is found by it,
// as the sweeps and orch stop find an attempt's processes.
func TestAttemptTokenOfChild(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), "ORCH_ATTEMPT_TOKEN=testrun/cue/X/1/abc")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if tok, ok := attemptToken(cmd.Process.Pid, "testrun/"); !ok || tok != "testrun/cue/X/1/abc" {
		t.Errorf("attemptToken = %q, %v", tok, ok)
	}
}
