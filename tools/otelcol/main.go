// Command otelcol-orch is an OpenTelemetry Collector built from the
// collector's own Go modules with the OTLP receiver (gRPC and HTTP) and the
// OTLP/HTTP exporter: the real collector that the otelcol_e2e test
// (e2e/otelcol) sends orch's traces through. It lives in its own module so
// that orch's go.mod does not carry the collector's dependencies.
package main

import (
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func main() {
	info := component.BuildInfo{Command: "otelcol-orch", Description: "collector for orch's tests", Version: "test"}
	set := otelcol.CollectorSettings{
		BuildInfo: info,
		Factories: func() (otelcol.Factories, error) {
			recv, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
			if err != nil {
				return otelcol.Factories{}, err
			}
			exp, err := otelcol.MakeFactoryMap[exporter.Factory](otlphttpexporter.NewFactory())
			if err != nil {
				return otelcol.Factories{}, err
			}
			return otelcol.Factories{Receivers: recv, Exporters: exp, Telemetry: otelconftelemetry.NewFactory()}, nil
		},
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
			DefaultScheme:     "env",
		}},
	}
	if err := otelcol.NewCommand(set).Execute(); err != nil {
		log.Fatal(err)
	}
}
