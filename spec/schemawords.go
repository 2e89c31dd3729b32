package spec

import (
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"
)

// keywordText says what value fails, from the failing keyword and its value
// in the schema (schemaAt is the schema object holding the keyword), never
// from the schema library's message: the library's wording is English meant
// for its own users and may change with it. The words are the ones orch has
// always printed for these keywords (they were the library's v5 messages).
// explain puts them after the field's name, or uses the schema's own
// description instead.
func keywordText(keyword string, schemaAt map[string]any, value any) string {
	bound := schemaAt[keyword]
	n, _ := bound.(float64)
	switch keyword {
	case "type":
		return fmt.Sprintf("expected %s, but got %s", strings.Join(schemaTypes(schemaAt), " or "), jsonType(value))
	case "minLength", "maxLength":
		s, _ := value.(string)
		return fmt.Sprintf("length must be %s %d, but got %d", bounds[keyword], int(n), utf8.RuneCountInString(s))
	case "minItems", "maxItems":
		a, _ := value.([]any)
		return fmt.Sprintf("%s %d items required, but found %d items", limitWord[keyword], int(n), len(a))
	case "minProperties", "maxProperties":
		m, _ := value.(map[string]any)
		return fmt.Sprintf("%s %d properties allowed, but found %d properties", limitWord[keyword], int(n), len(m))
	case "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum":
		return fmt.Sprintf("must be %s %v but found %v", bounds[keyword], bound, value)
	case "pattern":
		return "does not match pattern " + singleQuote(fmt.Sprint(bound))
	case "format":
		return fmt.Sprintf("%v is not valid %s", value, singleQuote(fmt.Sprint(bound)))
	case "uniqueItems":
		a, _ := value.([]any)
		j, i := firstRepeat(a)
		return fmt.Sprintf("items at index %d and %d are equal", j, i)
	case "enum":
		opts, _ := bound.([]any)
		names := make([]string, len(opts))
		for i, o := range opts {
			names[i] = show(o)
		}
		return "value must be one of " + strings.Join(names, ", ")
	case "const":
		return "value must be " + show(bound)
	case "required":
		obj, _ := value.(map[string]any)
		var missing []string
		for _, r := range asList(bound) {
			if name, _ := r.(string); name != "" {
				if _, ok := obj[name]; !ok {
					missing = append(missing, singleQuote(name))
				}
			}
		}
		return "missing properties: " + strings.Join(missing, ", ")
	case "":
		return "not allowed" // the schema false
	}
	return unexplained + keyword
}

// unexplained begins the text of a keyword keywordText has no words for:
// TestEveryKeywordExplained keeps the bundled schemas free of those.
const unexplained = "does not satisfy the schema's "

var bounds = map[string]string{
	"minLength": ">=", "maxLength": "<=",
	"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<",
}

var limitWord = map[string]string{
	"minItems": "minimum", "maxItems": "maximum", "minProperties": "minimum", "maxProperties": "maximum",
}

// schemaTypes is a schema's "type": one name or a list of them.
func schemaTypes(schemaAt map[string]any) []string {
	var types []string
	switch t := schemaAt["type"].(type) {
	case string:
		types = append(types, t)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	}
	return types
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// firstRepeat returns the first item of a that equals an earlier one (i) and
// the first such earlier one (j), as JSON compares them: 1 and 1.0 are equal.
func firstRepeat(a []any) (j, i int) {
	for i = 1; i < len(a); i++ {
		for j = 0; j < i; j++ {
			if sameJSON(a[i], a[j]) {
				return j, i
			}
		}
	}
	return 0, 0
}

func sameJSON(x, y any) bool {
	tx, ty := jsonType(x), jsonType(y)
	if tx == "integer" {
		tx = "number"
	}
	if ty == "integer" {
		ty = "number"
	}
	if tx != ty {
		return false
	}
	switch tx {
	case "array":
		ax, ay := x.([]any), y.([]any)
		if len(ax) != len(ay) {
			return false
		}
		for k := range ax {
			if !sameJSON(ax[k], ay[k]) {
				return false
			}
		}
		return true
	case "object":
		mx, my := x.(map[string]any), y.(map[string]any)
		if len(mx) != len(my) {
			return false
		}
		for k, vx := range mx {
			vy, ok := my[k]
			if !ok || !sameJSON(vx, vy) {
				return false
			}
		}
		return true
	case "number":
		rx, okx := new(big.Rat).SetString(fmt.Sprint(x))
		ry, oky := new(big.Rat).SetString(fmt.Sprint(y))
		return okx && oky && rx.Cmp(ry) == 0
	}
	return x == y
}

// singleQuote quotes s as Go does, between single quotes: 'a\tb'.
func singleQuote(s string) string {
	q := fmt.Sprintf("%q", s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}
