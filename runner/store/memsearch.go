package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/orch-cli/orch/runner/record"
)

// SearchItems is MemorySearch over items held elsewhere than a store (a
// Temporal run's memory, kept in its workflow): the same full-text search,
// the same ranking, in a scratch database that is removed afterwards. The
// items found are returned as given (their versions and authors kept).
func SearchItems(ctx context.Context, items []record.MemoryItem, query string, limit int) ([]record.MemoryItem, error) {
	if ftsQuery(query) == "" || len(items) == 0 {
		return []record.MemoryItem{}, nil
	}
	dir, err := os.MkdirTemp("", "orch-memory-")
	if err != nil {
		return nil, fmt.Errorf("searching memory for %q: %w", query, err)
	}
	defer os.RemoveAll(dir)
	d, err := Open(filepath.Join(dir, "memory.db"), Options{})
	if err != nil {
		return nil, fmt.Errorf("searching memory for %q: %w", query, err)
	}
	defer d.Close()
	byKey := make(map[string]record.MemoryItem, len(items))
	for _, it := range items {
		byKey[it.Key] = it
		if err := d.MemoryWrite(ctx, it); err != nil {
			return nil, fmt.Errorf("searching memory for %q: %w", query, err)
		}
	}
	found, err := d.MemorySearch(ctx, query, limit)
	if err != nil {
		return nil, err
	}
	for i, it := range found {
		found[i] = byKey[it.Key]
	}
	return found, nil
}
