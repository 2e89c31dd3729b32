package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

func keys(items []record.MemoryItem) string {
	var ks []string
	for _, it := range items {
		ks = append(ks, it.Key)
	}
	return strings.Join(ks, " ")
}

func writeMemory(t *testing.T, d *DB, items ...record.MemoryItem) {
	t.Helper()
	for _, it := range items {
		if err := d.MemoryWrite(context.Background(), it); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMemoryWriteAndSearch(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	writeMemory(t, d,
		record.MemoryItem{Key: "db-choice", Text: "We chose PostgreSQL for the orders service", Tags: []string{"database", "decision"}, Agent: "lead", RunID: "r1", At: at(1), Version: 1},
		record.MemoryItem{Key: "deploy-notes", Text: "Deploying needs the database migrations to run first", Tags: []string{"ops"}, Agent: "ops", RunID: "r1", At: at(2)},
		record.MemoryItem{Key: "flaky-test", Text: "TestCheckout is flaky on CI: retry it", Agent: "tester", RunID: "r2", At: at(3)},
		record.MemoryItem{Key: "café", Text: "The naïve résumé parser", At: at(4)},
	)
	for _, c := range []struct {
		query, want string
	}{
		{"postgresql", "db-choice"},
		{"database", "db-choice deploy-notes"}, // a tag weighs more than a word of the text
		{"database decision", "db-choice"},     // every word must match
		{"database nothing", ""},
		{"deploy", "deploy-notes"}, // the stemmer: deploy finds Deploying
		{"migration", "deploy-notes"},
		{"flak*", "flaky-test"}, // a prefix
		{"TestCheckout", "flaky-test"},
		{"checkout", ""},              // the tokenizer keeps TestCheckout one word
		{"cafe resume naive", "café"}, // diacritics do not matter
		{"ORDERS", "db-choice"},
		{"db-choice", "db-choice"}, // a word with a hyphen is a phrase, not NOT
	} {
		items, err := d.MemorySearch(ctx, c.query, 0)
		if err != nil {
			t.Errorf("search %q: %v", c.query, err)
			continue
		}
		if got := keys(items); got != c.want {
			t.Errorf("search %q = %q, want %q", c.query, got, c.want)
		}
	}
	items, _ := d.MemorySearch(ctx, "postgresql", 0)
	want := record.MemoryItem{Key: "db-choice", Text: "We chose PostgreSQL for the orders service", Tags: []string{"database", "decision"}, Agent: "lead", RunID: "r1", At: at(1), Version: 1}
	if len(items) != 1 || !reflect.DeepEqual(items[0], want) {
		t.Errorf("item %+v", items)
	}
}

// Whatever the query holds, it is words to find, never FTS5 syntax, so it
// never fails.
func TestMemorySearchSafeQueries(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	writeMemory(t, d,
		record.MemoryItem{Key: "ops", Text: `rock AND roll, "quoted" text, NOT here, NEAR the col:umn (paren) a-b * ^start`},
		record.MemoryItem{Key: "other", Text: "roll only"},
	)
	for _, c := range []struct {
		query, want string
	}{
		{"AND", "ops"}, // the word "and", not the operator
		{"rock AND roll", "ops"},
		{"OR", ""},
		{"NOT", "ops"},
		{"roll NOT rock", "ops"},
		{"NEAR(the roll)", "ops"}, // "near the" is a phrase of the text
		{"NEAR(rock roll)", ""},   // "near rock" is not
		{`"quoted`, "ops"},
		{`quoted"`, "ops"},
		{`"`, ""},
		{`""""`, ""},
		{"*", ""},
		{"-rock", "ops"},
		{"- roll", "ops other"},
		{"col:umn", "ops"},
		{"key:ops", ""}, // not a column filter: the phrase "key ops", which no item holds
		{"(paren", "ops"},
		{"^start", "ops"},
		{"a-b", "ops"},
		{"rock*", "ops"},
		{"***", ""},
		{"", ""},
		{"   ", ""},
		{"'; DROP TABLE memory; --", ""},
		{"\x00", ""},
	} {
		items, err := d.MemorySearch(ctx, c.query, 0)
		if err != nil {
			t.Errorf("search %q: %v", c.query, err)
			continue
		}
		got := keys(items)
		if c.query == "- roll" { // both match; their order is BM25's
			got = strings.Join(sortedFields(got), " ")
		}
		if got != c.want {
			t.Errorf("search %q = %q, want %q", c.query, got, c.want)
		}
	}
	if _, total, err := d.MemoryList(ctx, 0); err != nil || total != 2 {
		t.Errorf("memory lost: %d items, %v", total, err)
	}
}

func sortedFields(s string) []string {
	f := strings.Fields(s)
	for i := range f {
		for j := i + 1; j < len(f); j++ {
			if f[j] < f[i] {
				f[i], f[j] = f[j], f[i]
			}
		}
	}
	return f
}

// Writing a key again replaces its item, in the table and in the index.
func TestMemoryUpsert(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	writeMemory(t, d,
		record.MemoryItem{Key: "k", Text: "the old elephant", Tags: []string{"zoo"}, Agent: "a", RunID: "r1", At: at(1)},
		record.MemoryItem{Key: "other", Text: "giraffe", At: at(2)},
		record.MemoryItem{Key: "k", Text: "the new penguin", Agent: "b", RunID: "r2", At: at(3)},
	)
	if items, _ := d.MemorySearch(ctx, "elephant", 0); len(items) != 0 {
		t.Errorf("the replaced text is still found: %+v", items)
	}
	if items, _ := d.MemorySearch(ctx, "zoo", 0); len(items) != 0 {
		t.Errorf("the replaced tags are still found: %+v", items)
	}
	items, err := d.MemorySearch(ctx, "penguin", 0)
	want := record.MemoryItem{Key: "k", Text: "the new penguin", Tags: []string{}, Agent: "b", RunID: "r2", At: at(3), Version: 2}
	if err != nil || len(items) != 1 || !reflect.DeepEqual(items[0], want) {
		t.Errorf("search penguin = %+v, %v", items, err)
	}
	list, total, err := d.MemoryList(ctx, 0)
	if err != nil || total != 2 || keys(list) != "k other" {
		t.Errorf("MemoryList = %q (%d), %v", keys(list), total, err)
	}
	if err := d.MemoryWrite(ctx, record.MemoryItem{Key: " ", Text: "x"}); err == nil || !strings.Contains(err.Error(), "key is empty") {
		t.Errorf("empty key: %v", err)
	}
}

// Search ranks the better match first and honours the limit; MemoryList is
// newest first.
func TestMemoryRankingAndLimits(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	for i := range 30 {
		text := "notes about the build"
		if i == 17 {
			text = "cache cache cache: the build cache is warm"
		} else if i%5 == 0 {
			text = "a long note that mentions the cache once among many other words about the build and the tests"
		}
		writeMemory(t, d, record.MemoryItem{Key: fmt.Sprintf("n%02d", i), Text: text, At: at(i)})
	}
	writeMemory(t, d, record.MemoryItem{Key: "cache", Text: "see the other notes", At: at(99)})
	items, err := d.MemorySearch(ctx, "cache", 3)
	if err != nil {
		t.Fatal(err)
	}
	// The key weighs most, then the text that says it three times.
	if got := keys(items); got != "cache n17 n25" {
		t.Errorf("top 3 = %q", got)
	}
	if items, _ := d.MemorySearch(ctx, "build", 0); len(items) != DefaultMemoryLimit {
		t.Errorf("default limit: %d items", len(items))
	}
	list, total, err := d.MemoryList(ctx, 4)
	if err != nil || total != 31 || keys(list) != "cache n29 n28 n27" {
		t.Errorf("MemoryList = %q (%d), %v", keys(list), total, err)
	}
}

func TestFTSQuery(t *testing.T) {
	for in, want := range map[string]string{
		"hello world":    `"hello" "world"`,
		`say "hi"`:       `"say" """hi"""`,
		"pre* *":         `"pre"*`,
		"AND OR NOT":     `"AND" "OR" "NOT"`,
		"-x":             `"-x"`,
		"!!! ???":        ``,
		"über":           `"über"`,
		"a**":            `"a"*`,
		"col:umn(x)":     `"col:umn(x)"`,
		"tab\tnewline\n": `"tab" "newline"`,
	} {
		if got := ftsQuery(in); got != want {
			t.Errorf("ftsQuery(%q) = %s, want %s", in, got, want)
		}
	}
}
