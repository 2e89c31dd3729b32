package schemas

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestBundlesStandAlone checks that every bundle is valid JSON with no
// reference left to the shared definitions file, and that every local
// reference resolves inside the bundle.
func TestBundlesStandAlone(t *testing.T) {
	for _, kind := range Kinds {
		b, err := Bundle(kind)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if strings.Contains(string(b), "defs.schema.json") {
			t.Errorf("%s: bundle still refers to defs.schema.json", kind)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		defs := doc["$defs"].(map[string]any)
		for _, ref := range refs(doc, nil) {
			name, ok := strings.CutPrefix(ref, "#/$defs/")
			if !ok {
				t.Errorf("%s: non-local $ref %q", kind, ref)
				continue
			}
			if _, ok := defs[name]; !ok {
				t.Errorf("%s: $ref %q does not resolve", kind, ref)
			}
		}
	}
	if _, err := Bundle("nope"); err == nil {
		t.Error("unknown kind accepted")
	}
}

func refs(v any, out []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				out = append(out, s)
			}
			out = refs(x, out)
		}
	case []any:
		for _, x := range v {
			out = refs(x, out)
		}
	}
	return out
}

// TestBundleDocIsBundleDecoded checks that validation's decoded bundle is
// the document Bundle prints, value for value.
func TestBundleDocIsBundleDecoded(t *testing.T) {
	for _, kind := range Kinds {
		b, err := Bundle(kind)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		var want map[string]any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		got, err := BundleDoc(kind)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: BundleDoc differs from the decoded Bundle", kind)
		}
	}
	if _, err := BundleDoc("nope"); err == nil {
		t.Error("unknown kind accepted")
	}
}
