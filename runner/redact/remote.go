package redact

import (
	"net/url"
	"strings"
)

// RemoteVar names the git remote worktree agents share their branches
// through on --engine temporal (orch-temporal's --git-remote default); a
// redactor learns the credential it carries as a secret.
const RemoteVar = "ORCH_GIT_REMOTE"

// RemoteMarker is what a git remote's credential becomes.
const RemoteMarker = "[redacted:git-remote]"

// remoteUser splits a URL's userinfo (scheme://USERINFO@host/...), as
// written, into its user and password; ok is false when it has none.
func remoteUser(remote string) (user, password string, hasPassword, ok bool) {
	scheme, rest, found := strings.Cut(remote, "://")
	if !found || scheme == "" || strings.ContainsAny(scheme, "/@:") {
		return "", "", false, false
	}
	rest = hostPart(rest)
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", "", false, false
	}
	user, password, hasPassword = strings.Cut(rest[:at], ":")
	return user, password, hasPassword, true
}

// tokenUser reports whether a URL's user alone is its credential: over
// http(s), https://TOKEN@host/... is how a token is given to git (a user
// name of a few letters, https://alice@host/..., is not one).
func tokenUser(remote, user string) bool {
	scheme, _, _ := strings.Cut(remote, "://")
	scheme = strings.ToLower(scheme)
	return (scheme == "https" || scheme == "http") && len(user) >= minNamedValue
}

// RemoteSecrets are the secrets a git remote's URL carries: the password
// of its userinfo (https://user:PASSWORD@host/...), or a token given as the
// user alone (https://TOKEN@host/...), as written and decoded. None for a
// remote without them (an SSH address, a path, https://host/...).
func RemoteSecrets(remote string) []string {
	user, password, hasPassword, ok := remoteUser(remote)
	secret := password
	switch {
	case !ok:
		return nil
	case hasPassword && len(password) >= minSecret:
	case !hasPassword && tokenUser(remote, user):
		secret = user
	default:
		return nil
	}
	out := []string{secret}
	if dec, err := url.PathUnescape(secret); err == nil && dec != secret {
		out = append(out, dec)
	}
	return out
}

// StripRemote is a git remote without the credential it carries, nor the
// user that goes with it: what orch records and hands to other machines
// (https://host/...). Git finds the credential again with a credential
// helper, or a worker puts its own remote back (OwnRemote).
func StripRemote(remote string) string {
	_, _, hasPassword, ok := remoteUser(remote)
	if !ok || !hasPassword && len(RemoteSecrets(remote)) == 0 {
		return remote
	}
	scheme, rest, _ := strings.Cut(remote, "://")
	at := strings.LastIndex(hostPart(rest), "@")
	return scheme + "://" + rest[at+1:]
}

func hostPart(rest string) string {
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return rest[:i]
	}
	return rest
}

// OwnRemote is own (this machine's remote, with its credential) when it is
// the remote recorded (a stripped one) names, else recorded.
func OwnRemote(recorded, own string) string {
	if own != "" && StripRemote(own) == recorded {
		return own
	}
	return recorded
}

// MaskRemote masks the credential of remote in s (a message naming the
// remote, git's error text).
func MaskRemote(remote, s string) string {
	for _, v := range RemoteSecrets(remote) {
		s = strings.ReplaceAll(s, v, RemoteMarker)
	}
	return s
}
