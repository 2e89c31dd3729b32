//go:build unix

package redact

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestRedactor(t *testing.T) {
	pem := "-----BEGIN PRIVATE KEY-----\nQUJDREVGR0hJSktMTU5P\nd3h5ejAxMjM0NTY3\n-----END PRIVATE KEY-----"
	d := New([]string{
		"API_TOKEN=tok-<&>-123456", "TLS_KEY=" + pem, "DB_URL=pg://u:pw@h", "SHORT_TOKEN=abc", "DEBUG_KEY=true",
		"HOME=/home/someone-long", "ORCH_SECRETS=DB_URL",
	}, nil)
	for in, want := range map[string]string{
		"auth tok-<&>-123456 ok":      "auth [redacted:API_TOKEN] ok",
		"connect pg://u:pw@h":         "connect [redacted:DB_URL]",
		"key: " + pem:                 "key: [redacted:TLS_KEY]",
		"d3h5ejAxMjM0NTY3":            "[redacted:TLS_KEY line 3]",   // a line logged alone
		"abc true /home/someone-long": "abc true /home/someone-long", // too short, or not secret
	} {
		if got := d.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	// In JSON, a secret is found however it is escaped; the result is valid JSON.
	raw, _ := json.Marshal(map[string]any{"pem": pem, "t": []any{"tok-<&>-123456"}, "n": 1})
	got := d.JSON(raw)
	if !json.Valid(got) || strings.Contains(string(got), "QUJD") || strings.Contains(string(got), "123456") {
		t.Errorf("JSON: %s", got)
	}
	// A continued run puts the recorded secrets back from its environment.
	inputs := map[string]any{"token": "tok-<&>-123456", "list": []any{"x pg://u:pw@h"}}
	var recorded map[string]any
	raw, _ = json.Marshal(inputs)
	_ = json.Unmarshal(d.JSON(raw), &recorded)
	if recorded["token"] != "[redacted:API_TOKEN]" {
		t.Errorf("recorded %v", recorded)
	}
	if back := d.Restore(recorded); !reflect.DeepEqual(back, inputs) {
		t.Errorf("Restore: %v, want %v", back, inputs)
	}
}
