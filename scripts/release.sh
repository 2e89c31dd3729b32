#!/usr/bin/env bash
# Builds orch's release archives from a commit:
#
#   scripts/release.sh VERSION [COMMIT] [OUTDIR]
#
# VERSION is the tag (v1.2.3); COMMIT defaults to HEAD, OUTDIR to dist/.
# It writes orch_<version>_<os>_<arch>.tar.gz for linux and darwin (amd64,
# arm64), orch_<version>_windows_<arch>.zip (amd64, arm64), and SHA256SUMS.
#
# The builds are reproducible: they come from a fresh clone of COMMIT (so
# nothing uncommitted gets in, and the binary carries the commit and its
# date), with -trimpath (no build path in the binary), no cgo, an empty
# build id, and archives whose file times are the commit's time. The same
# commit and Go version give the same SHA256SUMS; --check builds twice, in
# two directories, and compares.
set -euo pipefail

check=false
if [ "${1:-}" = --check ]; then
	check=true
	shift
fi
[ $# -ge 1 ] || { echo "usage: $0 [--check] VERSION [COMMIT] [OUTDIR]" >&2; exit 2; }
version=$1
commit=${2:-HEAD}
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${3:-$repo/dist}
case $version in
v[0-9]*) ;;
*) echo "VERSION must look like v1.2.3, not $version" >&2; exit 2 ;;
esac
commit=$(git -C "$repo" rev-parse --verify "$commit^{commit}")

targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# build DIR: the archives and SHA256SUMS of $commit in DIR.
build() {
	local dest=$1 src
	src=$(mktemp -d "$tmp/src.XXXX")
	git clone -q --no-checkout "$repo" "$src"
	git -C "$src" checkout -q "$commit"
	local epoch
	epoch=$(git -C "$src" show -s --format=%ct "$commit")
	mkdir -p "$dest"
	for target in $targets; do
		local goos=${target%/*} goarch=${target#*/} name
		name="orch_${version#v}_${goos}_${goarch}"
		local stage="$tmp/stage/$name"
		rm -rf "$stage" && mkdir -p "$stage"
		# orch, and orch-temporal beside it (it holds the Temporal client,
		# for --engine temporal and orch worker; orch finds it next to itself).
		local bin
		for bin in orch orch-temporal; do
			local file=$bin
			[ "$goos" = windows ] && file=$bin.exe
			(cd "$src" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch GOFLAGS= \
				go build -trimpath -buildvcs=true -ldflags="-s -w -buildid= -X main.version=$version" \
				-o "$stage/$file" ./cmd/$bin)
		done
		# The README's links go to docs/, and its first command runs
		# examples/research: both travel with it.
		cp "$src/README.md" "$stage/"
		cp -R "$src/docs" "$src/examples" "$stage/"
		[ -f "$src/LICENSE" ] && cp "$src/LICENSE" "$stage/"
		find "$stage" -exec touch -h -d "@$epoch" {} +
		if [ "$goos" = windows ]; then
			(cd "$tmp/stage" && rm -f "$dest/$name.zip" && find "$name" | LC_ALL=C sort | TZ=UTC zip -q -X -@ "$dest/$name.zip")
		else
			tar -C "$tmp/stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
				-cf - "$name" | gzip -n -9 >"$dest/$name.tar.gz"
		fi
	done
	(cd "$dest" && sha256sum orch_* >SHA256SUMS)
}

build "$out"
if $check; then
	build "$tmp/again"
	if ! diff "$out/SHA256SUMS" "$tmp/again/SHA256SUMS"; then
		echo "not reproducible: a second build differs" >&2
		exit 1
	fi
	echo "reproducible: a second build in another directory has the same SHA256SUMS"
fi
cat "$out/SHA256SUMS"
