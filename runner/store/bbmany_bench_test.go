package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// BenchmarkBlackboardWriteMany is one agent flooding the blackboard, as the
// runner sees it: the writes it read from the agent since the last commit
// arrive as one group (batch=1 is a write at a time, BlackboardWrite). Each
// write is a blackboard row and its event. Target: 10,000 writes/s
// sustained (issue 6).
func BenchmarkBlackboardWriteMany(b *testing.B) {
	for _, c := range []struct{ batch, keys int }{{1, 100}, {64, 1}, {64, 100}, {256, 100}} {
		batch, keys := c.batch, c.keys
		b.Run(fmt.Sprintf("batch=%d/keys=%d", batch, keys), func(b *testing.B) {
			d, _ := openTest(b)
			startRun(b, d, "r1", "a")
			ctx := context.Background()
			// The keys are written in turn: with 100, a transaction of 64
			// writes reads each key's version once and touches many
			// pages of the board; with 1, it reads it once and appends.
			puts := make([]record.BlackboardPut, batch)
			value := json.RawMessage(`{"status":"researching","sources":["a","b","c"],"progress":0.42}`)
			txBefore := d.stats.transactions.Load()
			n := 0
			for b.Loop() {
				for i := range puts {
					puts[i] = record.BlackboardPut{Key: "finding-" + strconv.Itoa((n+i)%keys), Value: value, Author: "researcher",
						Cue: "a", Attempt: 1, MessageID: "m" + strconv.Itoa(n+i)}
				}
				if _, err := d.BlackboardWriteMany(ctx, "r1", puts); err != nil {
					b.Fatal(err)
				}
				n += batch
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "writes/s")
			b.ReportMetric(float64(n)/float64(max(1, d.stats.transactions.Load()-txBefore)), "writes/tx")
		})
	}
}

// BenchmarkMemorySearch is memory.search among 10,000 items of 20 to 40
// words each, drawn from 2,000 words with a few of them very common (as
// "the" or a project's name are): a rare word, two words, a prefix, and a
// word in a quarter of the items (the worst case: BM25 reads the size of
// every item that matches).
func BenchmarkMemorySearch(b *testing.B) {
	d, _ := openTest(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 2000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%c", i, 'a'+i%26)
	}
	common := []string{"service", "deploy", "database", "cache"}
	for i := range 10_000 {
		var words []string
		for range 20 + rng.IntN(20) {
			words = append(words, vocab[rng.IntN(len(vocab))])
		}
		if i%4 == 0 {
			words = append(words, common[rng.IntN(len(common))], "orders")
		}
		err := d.MemoryWrite(ctx, record.MemoryItem{Key: "note-" + strconv.Itoa(i), Text: strings.Join(words, " "),
			Tags: []string{vocab[rng.IntN(len(vocab))]}, Agent: "lead", RunID: "r1"})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []string{"w1234xm", "w17xr w1001xn", "w123*", "orders"} {
		b.Run(q, func(b *testing.B) {
			found := 0
			for b.Loop() {
				items, err := d.MemorySearch(ctx, q, 20)
				if err != nil {
					b.Fatal(err)
				}
				found = len(items)
			}
			b.ReportMetric(float64(found), "items")
		})
	}
}

// BenchmarkBlackboardSnapshot is the board's snapshot that goes into every
// GO task, after 100,000 writes to 100 keys.
func BenchmarkBlackboardSnapshot(b *testing.B) {
	d, _ := openTest(b)
	startRun(b, d, "r1", "a")
	ctx := context.Background()
	puts := make([]record.BlackboardPut, 1000)
	for n := 0; n < 100_000; n += len(puts) {
		for i := range puts {
			puts[i] = record.BlackboardPut{Key: "finding-" + strconv.Itoa((n+i)%100), Value: json.RawMessage(strconv.Itoa(n + i)), Author: "x"}
		}
		if _, err := d.BlackboardWriteMany(ctx, "r1", puts); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		board, err := d.Blackboard(ctx, "r1")
		if err != nil || len(board) != 100 {
			b.Fatal(len(board), err)
		}
	}
}
