// Package clis holds the end-to-end tests of orch's coding-agent drivers
// against the real coding CLIs, behind the build tag clis_e2e (Linux): the
// pinned npm packages (tools_test.go) are installed once into
// ${ORCH_TOOLS_CACHE:-$HOME/.cache/orch-tools}, each test gives them a
// private HOME pointed at a scripted model on loopback
// (internal/mockmodel), and runs the real orch binary on a cuelist:
// claude-code and codex (headless), acp with claude-agent-acp, codex-acp and
// gemini --acp (and the adapters' former packages), in the workdir and in a
// worktree; a permission asked of the person and answered with orch answer;
// a policy by tool kind; the four-CLI team; examples/team's
// cuelist.real.yaml, as it is and over ACP (its prompts carry no marker: the
// model knows each conversation by a phrase of it). Each checks the files the CLIs
// wrote, the tool lines of orch logs, the cost and tokens of orch status,
// what the model was sent, and that no process is left.
//
//	go test -tags clis_e2e -count=1 -v ./e2e/clis
//
// npm is needed to install the tools (the first run fills about 2 GB of
// cache in a minute or two; later runs reuse it); without npm the tests
// skip, saying so. CLIS_DUMP=DIR keeps every request the model answered. The CLIs run on a pinned Node (the node-linux-*
// npm package), whatever Node the machine has.
package clis
