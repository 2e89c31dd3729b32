// Package temporal holds the end-to-end test of `orch run --engine temporal`
// against a real Temporal dev server (scripts/temporal-dev.sh), behind the
// build tag temporal_e2e: it builds orch and orch-temporal, starts two
// `orch worker` processes, runs examples/deploy, kills a worker during a GO,
// restarts the server on the same database, says GO to the manual cue, and
// compares what `orch status` reads from SQLite with a local run's.
//
//	scripts/temporal-dev.sh build   # once: about 5 minutes, then cached
//	go test -tags temporal_e2e -run TestTemporal -count=1 -v ./e2e/temporal
//
// ORCH_TEMPORAL_ADDRESS=host:port uses a server already running there instead
// (the restart step is then skipped: the test does not own that server).
package temporal
