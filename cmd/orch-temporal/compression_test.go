package main

import (
	"testing"

	"go.temporal.io/sdk/client"
)

// A frontend on loopback gets requests without gzip (the SDK's default
// compresses each one: CPU on both sides, no bandwidth saved); any other
// keeps the SDK's default.
func TestNoCompressionOnLoopback(t *testing.T) {
	for addr, none := range map[string]bool{"127.0.0.1:7233": true, "localhost:7233": true, "[::1]:7233": true, "127.0.0.2:7233": true,
		"10.0.0.5:7233": false, "temporal.example.com:7233": false, "my-ns.tmprl.cloud:7233": false} {
		o, err := connection{address: addr, namespace: "default"}.options()
		if err != nil {
			t.Fatal(err)
		}
		_, off := o.ConnectionOptions.GrpcCompression.(*client.GrpcCompressionNone)
		if off != none || !none && o.ConnectionOptions.GrpcCompression != nil {
			t.Errorf("%s: compression %T, want none %v", addr, o.ConnectionOptions.GrpcCompression, none)
		}
	}
}
