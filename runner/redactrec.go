package runner

import (
	"context"
	"encoding/json"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
)

// redactingRecorder is the one place where the runner's records are
// redacted: every event, log line, blackboard write and memory item passes
// through it on its way to the store. Append masks the events in place, so
// that the observer (the progress lines, --output json) shows what was
// stored.
type redactingRecorder struct {
	record.Recorder

	d *redact.Redactor
}

func (r redactingRecorder) Append(ctx context.Context, events ...record.Event) error {
	record.Redact(r.d, events)
	return r.Recorder.Append(ctx, events...)
}

func (r redactingRecorder) Log(line record.LogLine) {
	line.Text = r.d.Text(line.Text)
	r.Recorder.Log(line)
}

func (r redactingRecorder) BlackboardWrite(ctx context.Context, runID, key string, value json.RawMessage, author string) (int64, error) {
	return r.Recorder.BlackboardWrite(ctx, runID, key, r.d.JSON(value), author)
}

func (r redactingRecorder) BlackboardWriteMany(ctx context.Context, runID string, puts []record.BlackboardPut) ([]record.BlackboardWritten, error) {
	masked := make([]record.BlackboardPut, len(puts))
	for i, p := range puts {
		p.Value = r.d.JSON(p.Value)
		masked[i] = p
	}
	return r.Recorder.BlackboardWriteMany(ctx, runID, masked)
}

// MemoryDelete forgets the key as MemoryWrite kept it: masked.
func (r redactingRecorder) MemoryDelete(ctx context.Context, runID, key string) (bool, error) {
	return r.Recorder.MemoryDelete(ctx, runID, r.d.Text(key))
}

func (r redactingRecorder) MemoryWrite(ctx context.Context, item record.MemoryItem) error {
	item.Key, item.Text = r.d.Text(item.Key), r.d.Text(item.Text)
	tags := make([]string, len(item.Tags))
	for i, t := range item.Tags {
		tags[i] = r.d.Text(t)
	}
	item.Tags = tags
	return r.Recorder.MemoryWrite(ctx, item)
}
