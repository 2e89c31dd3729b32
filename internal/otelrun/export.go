package otelrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Bounds of exporting; variables for the tests.
var (
	exportInterval = 5 * time.Second // finished spans wait at most this long to be sent
	exportWait     = 5 * time.Second // at the run's end, for the spans still to send
)

// exportBatch is the most spans one request carries.
const exportBatch = 512

// exporter sends finished spans off the run's path: add only queues them;
// one goroutine posts them every exportInterval, and at finish. A failed
// request is not retried: its spans are counted as lost and the first
// error is kept for the warning.
type exporter struct {
	cfg     *Config
	version string
	client  *http.Client

	mu      sync.Mutex
	pending []*span
	lost    int
	err     error

	stop   chan struct{}
	done   chan struct{}
	ctx    context.Context // cancelled when finish has waited long enough
	cancel context.CancelFunc
}

func newExporter(cfg *Config, version string) *exporter {
	x := &exporter{cfg: cfg, version: version, client: &http.Client{},
		stop: make(chan struct{}), done: make(chan struct{})}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	go x.loop()
	return x
}

func (x *exporter) add(s *span) {
	x.mu.Lock()
	x.pending = append(x.pending, s)
	x.mu.Unlock()
}

func (x *exporter) loop() {
	defer close(x.done)
	tick := time.NewTicker(exportInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			x.sendPending()
		case <-x.stop:
			x.sendPending()
			return
		}
	}
}

func (x *exporter) sendPending() {
	x.mu.Lock()
	spans := x.pending
	x.pending = nil
	x.mu.Unlock()
	for len(spans) > 0 {
		n := min(len(spans), exportBatch)
		if err := x.send(spans[:n]); err != nil {
			x.mu.Lock()
			x.lost += n
			if x.err == nil {
				x.err = err
			}
			x.mu.Unlock()
		}
		spans = spans[n:]
	}
}

func (x *exporter) send(spans []*span) error {
	if x.ctx.Err() != nil {
		return fmt.Errorf("gave up after waiting %s at the run's end", exportWait)
	}
	body, err := encode(x.cfg.Resource, x.version, spans)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(x.ctx, x.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "orch/"+x.version)
	for k, v := range x.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := x.client.Do(req)
	if err != nil {
		if x.ctx.Err() != nil {
			return fmt.Errorf("gave up after waiting %s at the run's end", exportWait)
		}
		return plainErr(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		line, _, _ := strings.Cut(strings.TrimSpace(string(msg)), "\n")
		if line != "" {
			line = ": " + line
		}
		return fmt.Errorf("the collector answered %s%s", resp.Status, line)
	}
	return nil
}

// plainErr drops the URL net/http puts in its errors: the warning names
// the endpoint once, without what its URL may hold (a user, a query).
func plainErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// finish sends the spans still pending, waiting at most exportWait, and
// returns a warning when some were not sent.
func (x *exporter) finish() string {
	close(x.stop)
	select {
	case <-x.done:
	case <-time.After(exportWait):
		x.cancel()
		<-x.done // every request is bound to x.ctx: it ends at once
	}
	x.cancel()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err == nil {
		return ""
	}
	return fmt.Sprintf("OpenTelemetry: %d span(s) of the run were not exported to %s: %v", x.lost, safeURL(x.cfg.URL), x.err)
}

// safeURL is a URL without its user info and query (they may hold secrets).
func safeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the endpoint"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
