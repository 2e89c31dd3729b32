package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

func TestBlackboardVersionsAndEvents(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	other, err := Open(path, Options{}) // a shell agent's `orch bb set`
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	writes := []struct {
		db          *DB
		key, value  string
		author      string
		wantVersion int64
	}{
		{d, "plan", `"draft"`, "planner", 1},
		{d, "plan", `"final"`, "reviewer", 2},
		{other, "plan", `{"v":3}`, "shell", 3},
		{other, "ticket", `42`, "shell", 1},
	}
	for _, w := range writes {
		v, err := w.db.BlackboardWrite(ctx, "r1", w.key, json.RawMessage(w.value), w.author)
		if err != nil || v != w.wantVersion {
			t.Fatalf("write %s=%s: version %d, %v; want %d", w.key, w.value, v, err, w.wantVersion)
		}
	}
	e, ok, err := d.BlackboardRead(ctx, "r1", "plan")
	if err != nil || !ok || string(e.Value) != `{"v":3}` || e.Version != 3 || e.Author != "shell" || e.At.IsZero() {
		t.Errorf("BlackboardRead(plan) = %+v %v %v", e, ok, err)
	}
	if _, ok, err := d.BlackboardRead(ctx, "r1", "missing"); ok || err != nil {
		t.Errorf("BlackboardRead(missing) = %v %v", ok, err)
	}
	board, err := d.Blackboard(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(board) != 2 || board["plan"].Version != 3 || string(board["ticket"].Value) != "42" || board["ticket"].Author != "shell" {
		t.Errorf("Blackboard = %+v", board)
	}
	// Each write is a blackboard/updated event, in sequence with the others.
	events, _ := d.Events(ctx, "r1", 1, 0)
	if len(events) != len(writes) {
		t.Fatalf("%d events, want %d", len(events), len(writes))
	}
	for i, ev := range events {
		data, ok := ev.Data.(record.BlackboardData)
		if !ok {
			t.Fatalf("event %d: data %#v", i, ev.Data)
		}
		w := writes[i]
		if ev.Seq != int64(i+2) || ev.Type != record.EvBlackboard || ev.Agent != w.author ||
			data != (record.BlackboardData{Key: w.key, Version: w.wantVersion}) {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
}

func TestBlackboardWriteErrors(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a")
	for _, c := range []struct {
		run, key, value, want string
	}{
		{"r1", "k", `{not json`, "not valid JSON"},
		{"r1", "k", ``, "not valid JSON"},
		{"r1", "", `1`, "key is empty"},
		{"", "k", `1`, "no run id"},
		{"ghost", "k", `1`, "run ghost does not exist"},
	} {
		_, err := d.BlackboardWrite(context.Background(), c.run, c.key, json.RawMessage(c.value), "me")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("BlackboardWrite(%q, %q, %q) = %v, want %q", c.run, c.key, c.value, err, c.want)
		}
	}
}

func TestCommands(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a", "b")
	startRun(t, d, "r2", "a")
	cli, err := Open(path, Options{}) // orch go, in another process
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var ids []int64
	for _, c := range []record.Command{
		{RunID: "r1", Kind: "go", Cue: "b"},
		{RunID: "r2", Kind: "go", Cue: "a"},
		{RunID: "r1", Kind: "go", Cue: "a", Arg: "x"},
	} {
		id, err := cli.AddCommand(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	cmds, err := d.Commands(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 2 || cmds[0].ID != ids[0] || cmds[0].Cue != "b" || cmds[1].ID != ids[2] || cmds[1].Arg != "x" ||
		cmds[0].Kind != "go" || cmds[0].RunID != "r1" || cmds[0].At.IsZero() {
		t.Fatalf("Commands(r1) = %+v", cmds)
	}
	if err := d.CommandDone(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := d.CommandDone(ctx, ids[0]); err != nil {
		t.Errorf("marking a command done twice: %v", err)
	}
	if cmds, _ := d.Commands(ctx, "r1"); len(cmds) != 1 || cmds[0].ID != ids[2] {
		t.Errorf("Commands(r1) after done = %+v", cmds)
	}
	if err := d.CommandDone(ctx, 9999); err == nil || !strings.Contains(err.Error(), "no command 9999") {
		t.Errorf("CommandDone(unknown) = %v", err)
	}
	if _, err := cli.AddCommand(ctx, record.Command{RunID: "ghost", Kind: "go"}); err == nil ||
		!strings.Contains(err.Error(), "run ghost does not exist") {
		t.Errorf("AddCommand(unknown run) = %v", err)
	}
}

// Blackboard answers from memory while nobody wrote, but sees every write at
// once: its own handle's, and another process's without waiting for a
// commit of its own (conditions depend on it).
func TestBlackboardSeesEveryWrite(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	startRun(t, d, "r2", "a")
	value := func(db *DB, run, key string) string {
		t.Helper()
		board, err := db.Blackboard(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		v := string(board[key].Value)
		board[key] = record.BlackboardEntry{Value: json.RawMessage(`"changed by the caller"`)}
		return v
	}
	if got := value(d, "r1", "plan"); got != "" {
		t.Fatalf("empty board: plan = %q", got)
	}
	if _, err := d.BlackboardWrite(ctx, "r1", "plan", json.RawMessage(`"draft"`), "planner"); err != nil {
		t.Fatal(err)
	}
	if got := value(d, "r1", "plan"); got != `"draft"` {
		t.Fatalf("after its own write: plan = %s, want \"draft\"", got)
	}
	if got := value(d, "r1", "plan"); got != `"draft"` {
		t.Fatalf("read again (a caller changed the map it got): plan = %s, want \"draft\"", got)
	}
	if _, err := d.BlackboardWrite(ctx, "r2", "plan", json.RawMessage(`"other run"`), "planner"); err != nil {
		t.Fatal(err)
	}
	if got := value(d, "r1", "plan"); got != `"draft"` {
		t.Fatalf("after a write to another run: plan = %s, want \"draft\"", got)
	}

	other, err := Open(path, Options{}) // a shell agent's `orch bb set`
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.BlackboardWrite(ctx, "r1", "plan", json.RawMessage(`"final"`), "shell"); err != nil {
		t.Fatal(err)
	}
	if got := value(d, "r1", "plan"); got != `"final"` {
		t.Errorf("after another process's write: plan = %s, want \"final\"", got)
	}
	if got := value(d, "r2", "plan"); got != `"other run"` {
		t.Errorf("r2: plan = %s", got)
	}
	if _, err := other.BlackboardWrite(ctx, "r1", "ticket", json.RawMessage(`42`), "shell"); err != nil {
		t.Fatal(err)
	}
	if got := value(d, "r1", "ticket"); got != "42" {
		t.Errorf("after another process's second write: ticket = %s", got)
	}
	d.Close()
	if _, err := d.Blackboard(ctx, "r1"); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}
