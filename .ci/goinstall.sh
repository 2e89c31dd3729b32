#!/usr/bin/env bash
# Checks what a user outside the repository does with orch's module:
#   go install github.com/orch-cli/orch/cmd/orch@VERSION
# and a module of their own that imports orch's spec package.
#
# The module is served from a throwaway file:// proxy holding this checkout's
# HEAD under its pseudo-version (what the public proxy would serve for that
# commit); the dependencies come from the local module cache, then from the
# usual proxy. A fresh module cache keeps this pseudo-version out of the real
# one. go install MODULE@VERSION refuses a go.mod with a replace directive,
# so this fails if one comes back.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
module=github.com/orch-cli/orch

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# The pseudo-version of HEAD: v0.0.0-<commit time, UTC>-<12 hex digits>.
rev=$(git rev-parse HEAD)
when=$(TZ=UTC git show -s --date=format-local:%Y%m%d%H%M%S --format=%cd HEAD)
version="v0.0.0-$when-${rev:0:12}"
echo "module $module@$version (HEAD; uncommitted changes are not in it)"

# The proxy layout: $GOPROXY/<module>/@v/{list,V.info,V.mod,V.zip}.
at="$tmp/proxy/$module/@v"
mkdir -p "$at"
echo "$version" >"$at/list"
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(TZ=UTC git show -s --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)" >"$at/$version.info"
git show HEAD:go.mod >"$at/$version.mod"
# A module zip is the module's files under MODULE@VERSION/ (git archive
# leaves out what is not committed, as the proxy would), without the
# directories of nested modules (tools/temporal has its own go.mod), which
# the proxy leaves out too and go refuses to unzip.
nested=()
for mod in $(git ls-tree -r --name-only HEAD | grep '/go\.mod$'); do
	nested+=(":(exclude)${mod%/go.mod}")
done
git archive --format=zip --prefix="$module@$version/" -o "$at/$version.zip" HEAD -- . ${nested[@]+"${nested[@]}"}

real_proxy=$(go env GOPROXY)
export GOPROXY="file://$tmp/proxy,file://$(go env GOMODCACHE)/cache/download,$real_proxy"
export GOMODCACHE="$tmp/modcache" GOFLAGS=-modcacherw
# orch's module is not in the checksum database: its go.sum lines are the
# ones go computes here. The dependencies are checked against orch's go.sum.
export GONOSUMDB=$module GOPRIVATE=
export GOBIN="$tmp/bin"

echo "== go install $module/cmd/orch@$version"
(cd "$tmp" && go install "$module/cmd/orch@$version")
orch="$GOBIN/orch"
"$orch" version
"$orch" version | grep -q "^orch $version (commit ${rev:0:12}, " || {
	echo "orch version does not name $version and commit ${rev:0:12}"; exit 1
}
"$orch" validate examples/*/cuelist.yaml

echo "== a module of its own that imports $module/spec"
mkdir -p "$tmp/user"
cat >"$tmp/user/go.mod" <<EOF
module example.com/user

go 1.26

require $module $version
EOF
cat >"$tmp/user/main.go" <<'EOF'
// Command user validates spec files with orch's spec package.
package main

import (
	"fmt"
	"os"

	"github.com/orch-cli/orch/spec"
)

func main() {
	set, diags, err := spec.Load(os.Args[1:], spec.LoadOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	diags = append(diags, spec.Check(set, spec.CheckOptions{})...)
	for _, d := range diags {
		fmt.Println(d)
	}
	if diags.HasErrors() {
		os.Exit(1)
	}
	fmt.Printf("%d files valid\n", len(set.Files))
}
EOF
cat >"$tmp/user/bad.yaml" <<'EOF'
agent:
  id: writer
  command: [sh, -c, "echo hi"]
  timeout: soon
EOF
# The dependencies' checksums are orch's (go.sum); orch's own, go computes.
cp go.sum "$tmp/user/go.sum"
(cd "$tmp/user" && GOFLAGS="$GOFLAGS -mod=mod" go mod tidy && go build -o user .)
"$tmp/user/user" "$repo"/examples/deploy/cuelist.yaml
if out=$("$tmp/user/user" "$tmp/user/bad.yaml"); then
	echo "the spec package accepted a bad timeout: $out"; exit 1
fi
echo "$out" | grep -q "timeout" || { echo "no diagnostic about the timeout: $out"; exit 1; }
echo "go install and the spec package work from outside the repository"
