package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/orch-cli/orch/runner/record"
)

// Memory is what agents keep across runs (memory.write): one row per key in
// the memory table, indexed for full-text search by memory_fts (FTS5), which
// triggers keep in step. It belongs to the database, not to a run.

// DefaultMemoryLimit is how many items MemorySearch and MemoryList return
// when the caller gives no limit.
const DefaultMemoryLimit = 20

// memoryWrite is a queued MemoryWrite, its tags already in JSON, or a
// MemoryDelete (remove: item.Key and item.RunID only; deleted is set).
type memoryWrite struct {
	item    record.MemoryItem
	tags    string
	remove  bool
	deleted bool
}

// MemoryWrite keeps item across runs, replacing the item with its key if
// there is one (runner.Recorder). Its time is now unless it has one.
func (d *DB) MemoryWrite(ctx context.Context, item record.MemoryItem) error {
	err := func() error {
		if strings.TrimSpace(item.Key) == "" {
			return errors.New("the key is empty")
		}
		if item.At.IsZero() {
			item.At = now()
		}
		tags := item.Tags
		if tags == nil {
			tags = []string{}
		}
		b, err := json.Marshal(tags)
		if err != nil {
			return err
		}
		return d.do(ctx, &request{kind: kindMemory, mem: memoryWrite{item: item, tags: string(b)}})
	}()
	if err != nil {
		return fmt.Errorf("keeping memory item %q: %w", item.Key, d.plain(err))
	}
	return nil
}

// writeMemory upserts the item as the key's next version, kept in
// memory_history too; the update keeps the row's id, so the full-text
// index follows it through the update trigger.
func (t *txn) writeMemory(m *memoryWrite) error {
	it := &m.item
	if m.remove {
		return t.deleteMemory(m)
	}
	var version int64
	if err := t.queryRow(`SELECT coalesce(max(version), 0) + 1 FROM memory_history WHERE key = ?`, it.Key).Scan(&version); err != nil {
		return fmt.Errorf("keeping memory item %q: %w", it.Key, err)
	}
	_, err := t.exec(`INSERT INTO memory (key, text, tags, agent_id, run_id, at, version) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET text = excluded.text, tags = excluded.tags,
			agent_id = excluded.agent_id, run_id = excluded.run_id, at = excluded.at, version = excluded.version`,
		it.Key, it.Text, m.tags, it.Agent, it.RunID, it.At.UnixMicro(), version)
	if err == nil {
		_, err = t.exec(`INSERT INTO memory_history (key, version, text, tags, agent_id, run_id, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			it.Key, version, it.Text, m.tags, it.Agent, it.RunID, it.At.UnixMicro())
	}
	if err != nil {
		return fmt.Errorf("keeping memory item %q: %w", it.Key, err)
	}
	return nil
}

func (t *txn) deleteMemory(m *memoryWrite) error {
	res, err := t.exec(`DELETE FROM memory WHERE key = ?`, m.item.Key)
	if err == nil {
		_, err = t.exec(`DELETE FROM memory_history WHERE key = ?`, m.item.Key)
	}
	if err != nil {
		return fmt.Errorf("forgetting memory item %q: %w", m.item.Key, err)
	}
	n, _ := res.RowsAffected()
	m.deleted = n > 0
	return nil
}

// MemoryDelete forgets the item key and its history (runner.Recorder);
// false when memory had no such item.
func (d *DB) MemoryDelete(ctx context.Context, runID, key string) (bool, error) {
	if strings.TrimSpace(key) == "" {
		return false, errors.New("forgetting a memory item: the key is empty")
	}
	r := &request{kind: kindMemory, mem: memoryWrite{item: record.MemoryItem{Key: key, RunID: runID}, remove: true}}
	if err := d.do(ctx, r); err != nil {
		return false, fmt.Errorf("forgetting memory item %q: %w", key, d.plain(err))
	}
	return r.mem.deleted, nil
}

// MemoryHistory returns every kept version of key, newest first (none: an
// empty list).
func (d *DB) MemoryHistory(ctx context.Context, key string) ([]record.MemoryItem, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT key, text, tags, agent_id, run_id, at, version FROM memory_history
		WHERE key = ? ORDER BY version DESC`, key)
	if err != nil {
		return nil, fmt.Errorf("reading the history of memory item %q: %w", key, d.plain(err))
	}
	items, err := scanMemory(rows)
	if err != nil {
		return nil, fmt.Errorf("reading the history of memory item %q: %w", key, d.plain(err))
	}
	return items, nil
}

// MemorySearch returns the items whose key, text or tags hold every word of
// query, best first (BM25, a match in the key or the tags weighing more than
// one in the text), at most limit (0: DefaultMemoryLimit). The query is
// words, not FTS5 syntax: each word is matched as written (operators,
// quotes and parentheses are plain text), and a word ending in * matches
// as a prefix. A query with no word in it finds nothing.
func (d *DB) MemorySearch(ctx context.Context, query string, limit int) ([]record.MemoryItem, error) {
	match := ftsQuery(query)
	if match == "" {
		return []record.MemoryItem{}, nil
	}
	if limit <= 0 {
		limit = DefaultMemoryLimit
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT m.key, m.text, m.tags, m.agent_id, m.run_id, m.at, m.version
		FROM memory_fts f JOIN memory m ON m.id = f.rowid
		WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts, 4.0, 1.0, 2.0), m.at DESC, m.id DESC LIMIT ?`, match, limit)
	if err != nil {
		return nil, fmt.Errorf("searching memory for %q: %w", query, d.plain(err))
	}
	items, err := scanMemory(rows)
	if err != nil {
		return nil, fmt.Errorf("searching memory for %q: %w", query, d.plain(err))
	}
	return items, nil
}

// MemoryList returns the newest items first, at most limit (0:
// DefaultMemoryLimit), and how many items memory holds.
func (d *DB) MemoryList(ctx context.Context, limit int) ([]record.MemoryItem, int, error) {
	if limit <= 0 {
		limit = DefaultMemoryLimit
	}
	var total int
	if err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM memory`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("listing memory in %s: %w", d.path, d.plain(err))
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT key, text, tags, agent_id, run_id, at, version FROM memory
		ORDER BY at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("listing memory in %s: %w", d.path, d.plain(err))
	}
	items, err := scanMemory(rows)
	if err != nil {
		return nil, 0, fmt.Errorf("listing memory in %s: %w", d.path, d.plain(err))
	}
	return items, total, nil
}

func scanMemory(rows *sql.Rows) ([]record.MemoryItem, error) {
	defer rows.Close()
	items := []record.MemoryItem{}
	for rows.Next() {
		var it record.MemoryItem
		var tags string
		var at sql.NullInt64
		if err := rows.Scan(&it.Key, &it.Text, &tags, &it.Agent, &it.RunID, &at, &it.Version); err != nil {
			return nil, err
		}
		if err := unmarshalColumn(tags, &it.Tags, "memory.tags"); err != nil {
			return nil, err
		}
		it.At = fromMicros(at)
		items = append(items, it)
	}
	return items, rows.Err()
}

// ftsQuery turns what a person or an agent typed into an FTS5 query that
// cannot be a syntax error: every word becomes a quoted string (a quote
// inside doubled), so AND, OR, NOT, NEAR, -, :, ^, parentheses and stray
// quotes are text; words are joined by spaces, which FTS5 reads as AND. A
// trailing * (after at least one letter or digit) keeps its meaning of a
// prefix search. Words without a letter or a digit are dropped: the
// tokenizer would make them empty phrases.
func ftsQuery(query string) string {
	var terms []string
	for _, w := range strings.Fields(query) {
		prefix := false
		if strings.HasSuffix(w, "*") {
			w = strings.TrimRight(w, "*")
			prefix = true
		}
		if !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue
		}
		term := `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
		if prefix {
			term += "*"
		}
		terms = append(terms, term)
	}
	return strings.Join(terms, " ")
}
