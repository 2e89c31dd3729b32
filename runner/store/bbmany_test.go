package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// BlackboardWriteMany stores the writes in order: versions count up per key
// from whatever the board held, each write has its event (with the writer's
// task, attempt and message id) in sequence, and the group shares
// transactions.
func TestBlackboardWriteManyOrderAndEvents(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	if _, err := d.BlackboardWrite(ctx, "r1", "k1", json.RawMessage(`"before"`), "person"); err != nil {
		t.Fatal(err)
	}
	var puts []record.BlackboardPut
	for i := range 10 {
		puts = append(puts, record.BlackboardPut{Key: fmt.Sprintf("k%d", i%3), Value: json.RawMessage(fmt.Sprint(i)),
			Author: "researcher", Cue: "a", Attempt: 2, MessageID: fmt.Sprintf("m%d", i)})
	}
	before := d.stats.transactions.Load()
	written, err := d.BlackboardWriteMany(ctx, "r1", puts)
	if err != nil {
		t.Fatal(err)
	}
	versions := versionsOf(written)
	if tx := d.stats.transactions.Load() - before; tx != 1 {
		t.Errorf("%d transactions for one group of 10", tx)
	}
	// k0: writes 0,3,6,9; k1 (had version 1): 1,4,7; k2: 2,5,8.
	want := []int64{1, 2, 1, 2, 3, 2, 3, 4, 3, 4}
	if fmt.Sprint(versions) != fmt.Sprint(want) {
		t.Errorf("versions %v, want %v", versions, want)
	}
	board, _ := d.Blackboard(ctx, "r1")
	if string(board["k0"].Value) != "9" || board["k0"].Version != 4 || string(board["k1"].Value) != "7" || board["k2"].Author != "researcher" {
		t.Errorf("board %+v", board)
	}
	events, err := d.Events(ctx, "r1", 2, 0) // after run/started and the first write
	if err != nil || len(events) != len(puts) {
		t.Fatalf("%d events, %v", len(events), err)
	}
	for i, ev := range events {
		data, ok := ev.Data.(record.BlackboardData)
		if !ok {
			t.Fatalf("event %d: data %#v", i, ev.Data)
		}
		p := puts[i]
		if ev.Seq != int64(i+3) || ev.Type != record.EvBlackboard || ev.Cue != "a" || ev.Attempt != 2 || ev.Agent != "researcher" ||
			data != (record.BlackboardData{Key: p.Key, Version: want[i], MessageID: p.MessageID}) {
			t.Errorf("event %d: %+v", i, ev)
		}
		// The events returned are the ones stored, seq included.
		if w := written[i].Event; w.Seq != ev.Seq || w.Type != ev.Type || w.Data != ev.Data || w.Cue != ev.Cue {
			t.Errorf("write %d returned event %+v, stored %+v", i, w, ev)
		}
	}
}

func versionsOf(written []record.BlackboardWritten) []int64 {
	out := make([]int64, len(written))
	for i, w := range written {
		out[i] = w.Version
	}
	return out
}

// A malformed put stops the group: the writes before it are stored and
// their versions returned with the error; nothing after it is written.
func TestBlackboardWriteManyStopsAtBadPut(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	puts := []record.BlackboardPut{
		{Key: "a", Value: json.RawMessage(`1`), Author: "x"},
		{Key: "b", Value: json.RawMessage(`2`), Author: "x"},
		{Key: "c", Value: json.RawMessage(`{oops`), Author: "x"},
		{Key: "d", Value: json.RawMessage(`4`), Author: "x"},
	}
	written, err := d.BlackboardWriteMany(ctx, "r1", puts)
	if err == nil || !strings.Contains(err.Error(), `blackboard key "c" of run r1: the value is not valid JSON`) {
		t.Errorf("error %v", err)
	}
	if versions := versionsOf(written); fmt.Sprint(versions) != "[1 1]" {
		t.Errorf("versions %v", versions)
	}
	board, _ := d.Blackboard(ctx, "r1")
	if len(board) != 2 || board["c"].Version != 0 || board["d"].Version != 0 {
		t.Errorf("board %+v", board)
	}
	if versions, err := d.BlackboardWriteMany(ctx, "ghost", puts[:1]); err == nil || len(versions) != 0 ||
		!strings.Contains(err.Error(), "run ghost does not exist") {
		t.Errorf("unknown run: %v %v", versions, err)
	}
	if versions, err := d.BlackboardWriteMany(ctx, "r1", nil); err != nil || len(versions) != 0 {
		t.Errorf("no puts: %v %v", versions, err)
	}
}

// A group larger than one request is queued as several, still in order and
// contiguous per key, while another writer (another process, too) writes
// the same key.
func TestBlackboardWriteManyLargeGroupWithOthers(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	n := 3*maxPutsPerRequest + 7
	puts := make([]record.BlackboardPut, n)
	for i := range puts {
		puts[i] = record.BlackboardPut{Key: "hot", Value: json.RawMessage(fmt.Sprint(i)), Author: "many"}
	}
	var wg sync.WaitGroup
	var otherVersions []int64
	wg.Go(func() {
		for i := range 50 {
			v, err := other.BlackboardWrite(ctx, "r1", "hot", json.RawMessage(fmt.Sprint(-i)), "other")
			if err != nil {
				t.Error(err)
				return
			}
			otherVersions = append(otherVersions, v)
		}
	})
	written, err := d.BlackboardWriteMany(ctx, "r1", puts)
	versions := versionsOf(written)
	wg.Wait()
	if err != nil || len(versions) != n {
		t.Fatalf("%d versions, %v", len(versions), err)
	}
	for i := 1; i < n; i++ {
		if versions[i] <= versions[i-1] {
			t.Fatalf("versions not increasing at %d: %d then %d", i, versions[i-1], versions[i])
		}
	}
	raw := rawDB(t, path)
	total := int64(n + len(otherVersions))
	if got := queryInt(t, raw, `SELECT count(*) FROM blackboard_history WHERE run_id = 'r1' AND key = 'hot'`); got != total {
		t.Errorf("%d rows, want %d", got, total)
	}
	// Versions are 1..total with no gap or repeat, and each is one event.
	if got := queryInt(t, raw, `SELECT count(DISTINCT version) FROM blackboard_history WHERE key = 'hot' AND version BETWEEN 1 AND ?`, total); got != total {
		t.Errorf("%d distinct versions in 1..%d", got, total)
	}
	if got := queryInt(t, raw, `SELECT count(*) FROM events WHERE run_id = 'r1' AND type = ?`, record.EvBlackboard); got != total {
		t.Errorf("%d events, want %d", got, total)
	}
	if got := queryInt(t, raw, `SELECT max(seq) FROM events WHERE run_id = 'r1'`); got != total+1 {
		t.Errorf("last seq %d, want %d", got, total+1)
	}
	// The values are in the order written: the latest "many" version holds n-1.
	if got := queryInt(t, raw, `SELECT value FROM blackboard_history WHERE key = 'hot' AND author = 'many' ORDER BY version DESC LIMIT 1`); got != int64(n-1) {
		t.Errorf("latest value %d", got)
	}
}
