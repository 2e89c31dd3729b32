package protocols

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// schemaDef is the part of a $defs entry of message.schema.json the structs
// must agree with.
type schemaDef struct {
	Required   []string                  `json:"required"`
	Properties map[string]schemaProperty `json:"properties"`
}

type schemaProperty struct {
	Type      string   `json:"type"`
	Ref       string   `json:"$ref"`
	Enum      []string `json:"enum"`
	Minimum   *float64 `json:"minimum"`
	MinLength *int     `json:"minLength"`
}

func loadSchema(t *testing.T) (types []string, defs map[string]schemaDef) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "schemas", "message.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties struct {
			MessageType struct {
				Enum []string `json:"enum"`
			} `json:"message_type"`
		} `json:"properties"`
		Defs map[string]schemaDef `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Properties.MessageType.Enum, doc.Defs
}

// TestSchemaAgreement keeps the Go structs and message.schema.json in step:
// the same types in the same order; for each type the same fields (apart from
// the envelope); required exactly where the schema requires, and then never
// omitempty; a JSON type that fits the schema's; the same enums, minimums and
// non-empty strings. The schema is the source of truth: when this fails after
// a schema change, change the struct.
func TestSchemaAgreement(t *testing.T) {
	types, defs := loadSchema(t)
	if !slices.Equal(types, Types()) {
		t.Fatalf("message types differ:\nschema %v\nGo     %v", types, Types())
	}
	envelope := map[string]bool{"message_type": true, "id": true, "in_reply_to": true}
	for _, typ := range types {
		def, ok := defs[typ]
		if !ok {
			t.Errorf("%s: no $defs entry in the schema", typ)
			continue
		}
		info := registry().byType[typ]
		for name, prop := range def.Properties {
			if envelope[name] {
				continue
			}
			f := info.byName[name]
			if f == nil {
				t.Errorf("%s: schema property %s has no field in %s", typ, name, info.typ)
				continue
			}
			checkProperty(t, typ, f, prop, slices.Contains(def.Required, name))
		}
		for _, f := range info.fields {
			if _, ok := def.Properties[f.name]; !ok {
				t.Errorf("%s: field %s of %s is not in the schema", typ, f.name, info.typ)
			}
		}
		for _, name := range def.Required {
			if !envelope[name] && info.byName[name] == nil {
				t.Errorf("%s: required property %s has no field", typ, name)
			}
		}
	}
}

func checkProperty(t *testing.T, typ string, f *field, prop schemaProperty, required bool) {
	t.Helper()
	if f.required != required {
		t.Errorf("%s.%s: required in the schema: %v, in Go: %v", typ, f.name, required, f.required)
	}
	if required && f.omitempty {
		t.Errorf("%s.%s is required but omitempty", typ, f.name)
	}
	want := map[string]jsonKind{"string": kindString, "boolean": kindBool, "integer": kindInteger,
		"number": kindNumber, "object": kindObject, "array": kindArray}
	switch {
	case prop.Type != "":
		if k, ok := want[prop.Type]; !ok || k != f.kind {
			t.Errorf("%s.%s: schema type %s, Go field is %s (%s)", typ, f.name, prop.Type, f.kind, f.typ)
		}
	case prop.Ref != "":
		// A $ref to a shared string definition (id, agentId, name), the task or the handoff context.
		wantKind := kindString
		if strings.HasSuffix(prop.Ref, "/task") || strings.HasSuffix(prop.Ref, "/handoffContext") {
			wantKind = kindObject
		}
		if f.kind != wantKind {
			t.Errorf("%s.%s: schema %s, Go field is %s", typ, f.name, prop.Ref, f.kind)
		}
	case prop.Enum != nil:
		if f.kind != kindString || !slices.Equal(prop.Enum, f.enum) {
			t.Errorf("%s.%s: schema enum %v, Go enum %v", typ, f.name, prop.Enum, f.enum)
		}
	default: // {}: any JSON value
		if f.kind != kindAny {
			t.Errorf("%s.%s: schema allows any value, Go field is %s", typ, f.name, f.typ)
		}
	}
	if prop.Enum == nil && f.enum != nil {
		t.Errorf("%s.%s: Go has enum %v, the schema none", typ, f.name, f.enum)
	}
	if (prop.Minimum == nil) != (f.min == nil) || prop.Minimum != nil && *prop.Minimum != *f.min {
		t.Errorf("%s.%s: schema minimum %v, Go min %v", typ, f.name, deref64(prop.Minimum), deref64(f.min))
	}
	if nonempty := prop.MinLength != nil && *prop.MinLength > 0; nonempty != f.nonempty {
		t.Errorf("%s.%s: schema minLength %v, Go nonempty %v", typ, f.name, prop.MinLength, f.nonempty)
	}
}

func deref64(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSchemaTask: the GO task has exactly the schema's task properties.
func TestSchemaTask(t *testing.T) {
	_, defs := loadSchema(t)
	var schema, goNames []string
	for name := range defs["task"].Properties {
		schema = append(schema, name)
	}
	tt := reflect.TypeOf(Task{})
	for i := 0; i < tt.NumField(); i++ {
		name, _, _ := strings.Cut(tt.Field(i).Tag.Get("json"), ",")
		goNames = append(goNames, name)
	}
	sort.Strings(schema)
	sort.Strings(goNames)
	if !slices.Equal(schema, goNames) {
		t.Errorf("task properties differ:\nschema %v\nGo     %v", schema, goNames)
	}
}
