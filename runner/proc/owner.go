package proc

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
)

// A process that starts agents for others (an engine's worker) can mark
// every process it starts with itself (SetOwner): ORCH_OWNER=PID:KEY. When
// it dies by kill -9 nothing stops what it started; the next such process
// of the same KEY (a worker of the same --root) finds what carries a mark
// of a PID no longer running and kills it, with its descendants, at its
// start (KillOrphanedOwned). A live owner's processes are spared, so two
// workers may share a KEY. A pid reused since spares what it left: the
// sweep errs towards leaving a process rather than killing a live one's.

// OwnerEnv names the mark in a process's environment.
const OwnerEnv = "ORCH_OWNER"

var owner atomic.Pointer[string] // "ORCH_OWNER=PID:KEY", nil: no mark

// SetOwner marks every process started from now on as this process's,
// under key.
func SetOwner(key string) {
	mark := OwnerEnv + "=" + strconv.Itoa(os.Getpid()) + ":" + key
	owner.Store(&mark)
}

// withOwner adds the owner's mark, if any, to env.
func withOwner(env []string) []string {
	if m := owner.Load(); m != nil {
		return append(env, *m)
	}
	return env
}

// orphanedOwned reports whether environment entry kv is an owner's mark
// under key of a process other than this one that is gone.
func orphanedOwned(kv []byte, key string) bool {
	v, ok := bytes.CutPrefix(kv, []byte(OwnerEnv+"="))
	if !ok {
		return false
	}
	pid, k, ok := bytes.Cut(v, []byte(":"))
	if !ok || string(k) != key {
		return false
	}
	n, err := strconv.Atoi(string(pid))
	return err == nil && n > 1 && n != os.Getpid() && !running(n)
}
