package redact

import (
	"slices"
	"strings"
	"testing"
)

func TestRemoteSecrets(t *testing.T) {
	for _, c := range []struct {
		remote, stripped string
		secrets          []string
	}{
		{"https://x-access-token:ghs_S3cret@github.com/org/repo.git", "https://github.com/org/repo.git", []string{"ghs_S3cret"}},
		{"https://ghp_0123456789abcdef@github.com/org/repo.git", "https://github.com/org/repo.git", []string{"ghp_0123456789abcdef"}},
		{"https://me:p%40ss%2Fword@example.com:8443/p.git", "https://example.com:8443/p.git", []string{"p%40ss%2Fword", "p@ss/word"}},
		{"http://user:pass@host/a@b.git", "http://host/a@b.git", []string{"pass"}},
		{"https://alice@example.com/p.git", "https://alice@example.com/p.git", nil}, // a user name, not a token
		{"ssh://git@example.com/team/p.git", "ssh://git@example.com/team/p.git", nil},
		{"git@example.com:team/p.git", "git@example.com:team/p.git", nil},
		{"/srv/remote.git", "/srv/remote.git", nil},
		{"https://example.com/p.git", "https://example.com/p.git", nil},
	} {
		if got := RemoteSecrets(c.remote); !slices.Equal(got, c.secrets) {
			t.Errorf("RemoteSecrets(%q) = %q, want %q", c.remote, got, c.secrets)
		}
		if got := StripRemote(c.remote); got != c.stripped {
			t.Errorf("StripRemote(%q) = %q, want %q", c.remote, got, c.stripped)
		}
		if again := StripRemote(c.stripped); again != c.stripped {
			t.Errorf("StripRemote(%q) = %q: not stripped once and for all", c.stripped, again)
		}
		if got := OwnRemote(StripRemote(c.remote), c.remote); got != c.remote {
			t.Errorf("OwnRemote of %q = %q", c.remote, got)
		}
	}
	if got := OwnRemote("https://other.example/p.git", "https://me:tok3n@example.com/p.git"); got != "https://other.example/p.git" {
		t.Errorf("OwnRemote put a credential into another remote: %q", got)
	}
}

// A redactor learns the credential of ORCH_GIT_REMOTE: git's error text,
// which prints the URL, is masked wherever orch records or prints it.
func TestRedactorMasksTheRemotesCredential(t *testing.T) {
	remote := "https://x-access-token:ghs_S3cretV4lue@github.com/org/repo.git"
	d := New([]string{RemoteVar + "=" + remote}, nil)
	msg := "fatal: unable to access '" + remote + "/': The requested URL returned error: 403"
	got := d.Text(msg)
	if strings.Contains(got, "ghs_S3cretV4lue") || !strings.Contains(got, "x-access-token:"+RemoteMarker+"@github.com") {
		t.Errorf("Text = %q", got)
	}
	if back := d.RestoreText(got); back != msg {
		t.Errorf("RestoreText = %q", back)
	}
	if got := MaskRemote(remote, msg); got != d.Text(msg) {
		t.Errorf("MaskRemote = %q", got)
	}
	if !New([]string{RemoteVar + "=git@example.com:p.git"}, nil).None() {
		t.Error("a remote without a credential made a secret")
	}
}
