package control

import (
	"context"
	"errors"
	"fmt"

	"github.com/orch-cli/orch/runner/record"
)

// MemoryItem is one memory item, as orch memory --output json prints it.
type MemoryItem struct {
	Key   string   `json:"key"`
	Text  string   `json:"text"`
	Tags  []string `json:"tags"`
	Agent string   `json:"agent"`
	RunID string   `json:"run_id"`
	At    *string  `json:"at"`
	// Version counts the writes of the key; Author is who wrote this
	// version (the same as Agent, by the name memory.results uses).
	Version int64  `json:"version"`
	Author  string `json:"author"`

	Item record.MemoryItem `json:"-"` // the store's, for renderers (At as a time)
}

func memoryItems(items []record.MemoryItem) []MemoryItem {
	out := make([]MemoryItem, 0, len(items))
	for _, it := range items {
		tags := it.Tags
		if tags == nil {
			tags = []string{}
		}
		out = append(out, MemoryItem{Key: it.Key, Text: it.Text, Tags: tags, Agent: it.Agent, RunID: it.RunID, At: timeJSON(it.At),
			Version: it.Version, Author: it.Agent, Item: it})
	}
	return out
}

// MemoryList lists memory items, newest first, at most limit, and how many
// memory holds. With no database yet the error wraps ErrNoDatabase.
func (c *Controller) MemoryList(ctx context.Context, limit int) ([]MemoryItem, int, error) {
	db, err := c.Reader()
	if err != nil {
		return nil, 0, err
	}
	items, total, err := db.MemoryList(ctx, limit)
	return memoryItems(items), total, c.damaged(err)
}

// MemorySearch finds the memory items that hold every word of query, best
// match first. With no database yet the error wraps ErrNoDatabase.
func (c *Controller) MemorySearch(ctx context.Context, query string, limit int) ([]MemoryItem, error) {
	db, err := c.Reader()
	if err != nil {
		return nil, err
	}
	items, err := db.MemorySearch(ctx, query, limit)
	return memoryItems(items), c.damaged(err)
}

// MemoryHistory is every version of memory item key kept, newest first; a
// key memory does not have is Absent.
func (c *Controller) MemoryHistory(ctx context.Context, key string) ([]MemoryItem, error) {
	db, err := c.Reader()
	if errors.Is(err, ErrNoDatabase) {
		return nil, &Error{Kind: Absent, Err: fmt.Errorf("memory has no item %q: memory is empty", key)}
	}
	if err != nil {
		return nil, err
	}
	items, err := db.MemoryHistory(ctx, key)
	if err != nil {
		return nil, c.damaged(err)
	}
	if len(items) == 0 {
		return nil, &Error{Kind: Absent, Err: fmt.Errorf("memory has no item %q (orch memory ls lists the keys)", key)}
	}
	return memoryItems(items), nil
}

// MemoryForget forgets memory item key, every version of it; a key memory
// does not have is Absent (nothing is changed).
func (c *Controller) MemoryForget(ctx context.Context, key string) error {
	db, err := c.writer()
	if err != nil {
		return err
	}
	defer db.Close()
	ok, err := db.MemoryDelete(ctx, "", key)
	if err != nil {
		return c.damaged(err)
	}
	if !ok {
		return &Error{Kind: Absent, Err: fmt.Errorf("memory has no item %q: nothing to forget (orch memory ls lists the keys)", key)}
	}
	return nil
}
