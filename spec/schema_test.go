package spec

import (
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/jsonschema"
)

// TestSchemasValidAgainstDraft checks the bundled schemas against the
// draft 2020-12 metaschema: orch compiles them without that check at run
// time (see kindSchema.compile), so this test is where an invalid schema is
// caught.
func TestSchemasValidAgainstDraft(t *testing.T) {
	for _, kind := range []Kind{KindAgent, KindCuelist, KindMessage} {
		var ks kindSchema
		if ks.compileChecked(kind, true); ks.err != nil {
			t.Errorf("%s schema: %v", kind, ks.err)
		}
	}
}

// TestSkipSchemaValidation shows what the patched compiler skips: a schema
// that breaks the metaschema is refused with the check and compiled without
// (a title that is not a string; the compiler itself would panic on some
// other invalid schemas, which is why only checked schemas may skip it).
func TestSkipSchemaValidation(t *testing.T) {
	compile := func(skip bool) error {
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		c.SkipSchemaValidation = skip
		if err := c.AddResource("https://orch.dev/broken.json", strings.NewReader(`{"title": 5}`)); err != nil {
			t.Fatal(err)
		}
		_, err := c.Compile("https://orch.dev/broken.json")
		return err
	}
	if err := compile(false); err == nil || !strings.Contains(err.Error(), "title") {
		t.Errorf("checked: got %v, want an error about the title", err)
	}
	if err := compile(true); err != nil {
		t.Errorf("unchecked: %v", err)
	}
}

// TestSkipSchemaValidationKeepsVocabularies: without the metaschema check,
// the vocabularies of the draft named by $schema still decide which keywords
// apply (a minLength of the validation vocabulary is asserted).
func TestSkipSchemaValidationKeepsVocabularies(t *testing.T) {
	for _, skip := range []bool{false, true} {
		c := jsonschema.NewCompiler()
		c.SkipSchemaValidation = skip
		src := `{"$schema": "https://json-schema.org/draft/2020-12/schema", "minLength": 3}`
		if err := c.AddResource("https://orch.dev/min.json", strings.NewReader(src)); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("https://orch.dev/min.json")
		if err != nil {
			t.Fatalf("skip=%v: %v", skip, err)
		}
		if s.Validate("ab") == nil {
			t.Errorf("skip=%v: a 2-character string passed minLength 3", skip)
		}
	}
}
