package main

import (
	"fmt"
	"os"

	"github.com/orch-cli/orch/internal/otelrun"
)

// newTracer returns the run's OpenTelemetry tracer when the OTEL_*
// variables or --otel ask for one, else nil (nothing leaves the machine).
// What is set and not followed is said once, on stderr, before the run.
func newTracer(io *streams, force bool, cuelist string) *otelrun.Tracer {
	cfg, warnings := otelrun.FromEnv(os.Getenv, force)
	tracer, more := otelrun.New(cfg, cuelist, versionString())
	for _, w := range append(warnings, more...) {
		fmt.Fprintln(io.err, "orch: warning: "+w)
	}
	return tracer
}
