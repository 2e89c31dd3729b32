#!/usr/bin/env bash
# Resume after a crash (issue 5): a run of 4,000 independent /bin/true cues is
# killed with SIGKILL once it has recorded 10,000 events; `orch resume` must
# issue its first new GO within a second. Printed: events recorded at the kill,
# seconds from starting `orch resume` to its first GO, and, as the baseline
# measured in the same run, seconds for `orch version` (process start alone).
#   bench/resume.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:-10000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/orch" ./cmd/orch
go run ./testdata/gen -cues 4000 -independent -claimers 0 -no-provides -command /bin/true -max-parallel 2 >"$tmp/big.yaml"
python3 - "$tmp" "$want" <<'PY'
import json, os, signal, subprocess, sys, time
tmp, want = sys.argv[1], int(sys.argv[2])
orch, db = f"{tmp}/orch", f"{tmp}/o.db"
run = subprocess.Popen([orch, "run", "--db", db, "--output", "json", f"{tmp}/big.yaml"], stdout=subprocess.PIPE, text=True)
run_id, seen = None, 0
for line in run.stdout:
    ev = json.loads(line)
    run_id, seen = ev["run_id"], ev["seq"]
    if seen >= want:
        break
os.kill(run.pid, signal.SIGKILL)
run.wait()
t0 = time.monotonic()
subprocess.run([orch, "version"], stdout=subprocess.DEVNULL, check=True)
base = time.monotonic() - t0
t0 = time.monotonic()
res = subprocess.Popen([orch, "resume", "--db", db, "--output", "json", run_id], stdout=subprocess.PIPE, text=True)
first = None
for line in res.stdout:
    ev = json.loads(line)
    if ev.get("type") == "cue/state" and ev.get("state") == "go":
        first = time.monotonic() - t0
        break
res.kill()
res.wait()
print(f"events at kill        {seen}")
print(f"resume to first GO    {first:.3f} s")
print(f"orch version (start)  {base:.3f} s")
PY
