#!/usr/bin/env bash
# One cue through orch against the coding CLI alone (issue 26). For each
# CLI, one turn that writes a file and runs a command (the mock model's
# write-shell script: three model requests), by hand and through `orch run`,
# in turn ROUNDS times (bench/interleave.py): printed per CLI, min and median
# seconds of each, and orch's ratios to the CLI by hand (min, median, paired
# per round). By hand is the CLI with the flags orch gives it (claude -p
# ..., codex exec ...), or bench/acp_once.py for an ACP agent, which ends
# the agent as soon as its turn ends.
#   bench/clis.sh [ROUNDS] [CLI...]
# CLI: claude-code codex claude-agent-acp codex-acp gemini claude-code-acp
# codex-acp-0.16 (default: all). The CLIs are the ones e2e/clis installs
# into ${ORCH_TOOLS_CACHE:-$HOME/.cache/orch-tools}/clis: run it once first.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
rounds=${1:-5}
shift || true
clis=${*:-claude-code codex claude-agent-acp codex-acp gemini claude-code-acp codex-acp-0.16}
cache=${ORCH_TOOLS_CACHE:-$HOME/.cache/orch-tools}/clis
bin() { # the newest install of a set
	local d
	d=$(ls -td "$cache/$1"-*/node_modules/.bin 2>/dev/null | head -n 1)
	[ -n "$d" ] || { echo "bench/clis.sh: no $1 CLIs in $cache: run go test -tags clis_e2e ./e2e/clis once" >&2; exit 1; }
	echo "$d"
}
node=$(bin node) current=$(bin current) legacy=$(bin legacy)
tmp=$(mktemp -d)
mock=""
cleanup() {
	[ -z "$mock" ] || kill "$mock" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/" ./cmd/orch ./internal/mockmodel/cmd/mockmodel
"$tmp/mockmodel" >"$tmp/mock.url" 2>"$tmp/mock.err" &
mock=$!
for _ in $(seq 1 100); do [ -s "$tmp/mock.url" ] && break; sleep 0.05; done
url=$(head -n 1 "$tmp/mock.url")

# A private HOME, as e2e/clis writes it.
home=$tmp/home
mkdir -p "$home/.claude" "$home/.codex" "$home/.gemini"
echo '{"permissions": {"defaultMode": "default"}}' >"$home/.claude/settings.json"
printf 'model = "gpt-5.5"\nmodel_provider = "mock"\n[model_providers.mock]\nname = "mock model"\nbase_url = "%s/v1"\nwire_api = "responses"\nenv_key = "MOCK_API_KEY"\n' "$url" >"$home/.codex/config.toml"
echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true}, "privacy": {"usageStatisticsEnabled": false}}' >"$home/.gemini/settings.json"
unset IS_SANDBOX ORCH_DB ORCH_ENGINE
export HOME=$home XDG_CONFIG_HOME=$home/.config XDG_CACHE_HOME=$home/.cache NO_COLOR=1 \
	ANTHROPIC_BASE_URL=$url ANTHROPIC_API_KEY=sk-ant-mock CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
	CODEX_HOME=$home/.codex MOCK_API_KEY=mock \
	GOOGLE_GEMINI_BASE_URL=$url GEMINI_API_KEY=mock GEMINI_CLI_TRUST_WORKSPACE=true

prompt='[mock-script write-shell] Write hello.txt, then run a command.


End your reply with a JSON object holding these keys: summary.'
perms='{read: allow, edit: allow, execute: allow, default: deny}'

printf '%-16s %-9s %7s %7s %7s %7s %7s\n' CLI RUN MIN MEDIAN MIN/x MED/x PAIRED/x
for cli in $clis; do
	path=$tmp:$node:$current:/usr/local/bin:/usr/bin:/bin
	existing=""
	case $cli in
	claude-code) agent="protocol: claude-code"
		hand="claude -p --output-format stream-json --verbose --allowedTools Edit,Write,NotebookEdit,Bash,Read" ;;
	codex) agent="protocol: codex"
		hand="codex exec --json --skip-git-repo-check --sandbox workspace-write -" ;;
	claude-agent-acp) agent=$'protocol: acp\n  command: [claude-agent-acp]' hand="python3 $repo/bench/acp_once.py claude-agent-acp" ;;
	codex-acp) agent=$'protocol: acp\n  command: [codex-acp]' hand="python3 $repo/bench/acp_once.py codex-acp" ;;
	gemini) agent=$'protocol: acp\n  command: [gemini, --acp]' hand="python3 $repo/bench/acp_once.py gemini --acp"
		existing="echo old >hello.txt && " ;; # gemini over ACP writes only files that exist
	claude-code-acp) agent=$'protocol: acp\n  command: [claude-code-acp]' path=$tmp:$node:$legacy:$current:/usr/bin:/bin
		hand="python3 $repo/bench/acp_once.py claude-code-acp" ;;
	codex-acp-0.16) agent=$'protocol: acp\n  command: [codex-acp]' path=$tmp:$node:$legacy:$current:/usr/bin:/bin
		hand="python3 $repo/bench/acp_once.py codex-acp" ;;
	*) echo "bench/clis.sh: unknown CLI $cli" >&2; exit 2 ;;
	esac
	dir=$tmp/$cli
	mkdir -p "$dir"
	printf '%s' "$prompt" >"$dir/prompt.txt"
	cat >"$dir/cuelist.yaml" <<EOF
cuelist:
  id: one
  defaults: {ack_timeout: 60s}      # gemini takes seconds to answer initialize on a busy machine
  cues:
    - id: WORK
      agents: [coder]
---
agent:
  id: coder
  $agent
  prompt: |
    [mock-script write-shell] Write hello.txt, then run a command.
  permissions: $perms
  provides: [text, summary]
EOF
	reset="cd $dir && rm -f hello.txt shell.txt && $existing"
	out=$(PATH=$path python3 bench/interleave.py "$rounds" \
		-- sh -c "$reset exec $hand <prompt.txt" \
		-- sh -c "$reset exec orch run cuelist.yaml") ||
		{ (cd "$dir" && PATH=$path orch logs last | tail -n 20) >&2; exit 1; }
	by=$(sed -n 1p <<<"$out") via=$(sed -n 2p <<<"$out")
	read -r bmin bmed _ <<<"$by"
	read -r omin omed rmin rmed rpaired <<<"$via"
	printf '%-16s %-9s %7s %7s\n' "$cli" "by hand" "$bmin" "$bmed"
	printf '%-16s %-9s %7s %7s %7s %7s %7s\n' "" "orch" "$omin" "$omed" "$rmin" "$rmed" "$rpaired"
	[ -s "$dir/hello.txt" ] || { echo "bench/clis.sh: $cli wrote no hello.txt" >&2; exit 1; }
done
