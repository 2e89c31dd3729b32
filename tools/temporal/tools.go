//go:build tools

// Package tools pins the Temporal CLI (which embeds the dev server) used by
// scripts/temporal-dev.sh and the temporal_e2e tests. It lives in its own
// module so orch's go.mod does not carry the server's dependencies.
package tools

import _ "github.com/temporalio/cli/cmd/temporal"
