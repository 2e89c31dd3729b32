package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestConnectionFlagsHandedOver: orch run --engine temporal and orch worker
// pass the TLS flags to orch-temporal on its command line and the API key
// in its environment ($TEMPORAL_API_KEY), never on a command line; given no
// --api-key, orch-temporal inherits the variable as it is.
func TestConnectionFlagsHandedOver(t *testing.T) {
	fixedRunID(t, "0123456789ab")
	argv := fakeTemporal(t)
	dbFile := filepath.Join(t.TempDir(), "orch.db")
	keyOf := func() string {
		b, _ := os.ReadFile(os.Getenv("FAKE_ARGV") + ".key")
		return string(b)
	}
	tls := []string{"--tls-ca", "ca.pem", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-server-name", "temporal.example"}
	for _, tc := range []struct {
		args, want []string
		key        string
	}{
		{args: append([]string{"run", "--engine", "temporal", "--db", dbFile, "--api-key", "k-123", "x.yaml"}, tls...),
			want: []string{"run", "--db", dbFile, "--temporal-address", "127.0.0.1:7233", "--temporal-namespace", "default", "--task-queue", "orch",
				"--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-ca", "ca.pem", "--tls-server-name", "temporal.example", "--run-id", "0123456789ab", "--", "x.yaml"},
			key: "k-123"},
		{args: []string{"worker", "--db", dbFile, "--api-key", "k-456", "--tls", "true"},
			want: []string{"worker", "--db", dbFile, "--tls", "true"}, key: "k-456"},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &streams{in: strings.NewReader(""), out: &out, err: &errOut})
		if code != 0 {
			t.Fatalf("orch %q: exit %d: %s", tc.args, code, errOut.String())
		}
		if got := argv(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("orch %q ran orch-temporal\n %q\nwant\n %q", tc.args, got, tc.want)
		}
		if got := keyOf(); got != tc.key {
			t.Errorf("orch %q: orch-temporal's $TEMPORAL_API_KEY %q, want %q", tc.args, got, tc.key)
		}
	}
	t.Setenv("TEMPORAL_API_KEY", "from-env")
	var out, errOut bytes.Buffer
	if code := run([]string{"worker", "--db", dbFile}, &streams{in: strings.NewReader(""), out: &out, err: &errOut}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got := keyOf(); got != "from-env" {
		t.Fatalf("inherited key %q", got)
	}
}

// fixedRunID makes the id orch gives a run it starts on Temporal id.
func fixedRunID(t *testing.T, id string) {
	old := progressRunID
	progressRunID = func() string { return id }
	t.Cleanup(func() { progressRunID = old })
}

// TestGitRemoteHandedOverInTheEnvironment: --git-remote goes to
// orch-temporal as $ORCH_GIT_REMOTE, never on its command line, where a
// token in the URL would be visible to every user of the machine (ps).
func TestGitRemoteHandedOverInTheEnvironment(t *testing.T) {
	fixedRunID(t, "0123456789ab")
	argv := fakeTemporal(t)
	t.Setenv("ORCH_GIT_REMOTE", "")
	dbFile := filepath.Join(t.TempDir(), "orch.db")
	const remote = "https://x-access-token:ghs_FakeToken123@example.com/org/repo.git"
	for _, args := range [][]string{
		{"run", "--engine", "temporal", "--db", dbFile, "--git-remote", remote, "x.yaml"},
		{"run", "--engine", "temporal", "--detach", "--db", dbFile, "--git-remote", remote, "x.yaml"},
		{"worker", "--db", dbFile, "--git-remote", remote},
	} {
		var out, errOut bytes.Buffer
		if code := run(args, &streams{in: strings.NewReader(""), out: &out, err: &errOut}); code != 0 {
			t.Fatalf("orch %q: exit %d: %s", args, code, errOut.String())
		}
		if got := argv(); strings.Contains(strings.Join(got, " "), "ghs_FakeToken123") || slices.Contains(got, "--git-remote") {
			t.Errorf("orch %q: orch-temporal's command line holds the remote: %q", args, got)
		}
		if b, _ := os.ReadFile(os.Getenv("FAKE_ARGV") + ".remote"); string(b) != remote {
			t.Errorf("orch %q: orch-temporal's $ORCH_GIT_REMOTE %q, want %q", args, b, remote)
		}
	}
}
