package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/orch-cli/orch/spec"
)

// sinksOf returns where a cuelist's notify block sends (dir: the
// cuelist's directory, where its command runs).
func sinksOf(n *spec.Notify, dir string) []sink {
	if !n.Sends() {
		return nil
	}
	timeout := notifyTimeout
	if n.Timeout > 0 {
		timeout = n.Timeout.D()
	}
	var sinks []sink
	if len(n.Run) > 0 {
		sinks = append(sinks, &commandSink{argv: n.Run, dir: dir, timeout: timeout})
	}
	if n.URL != "" {
		sinks = append(sinks, &webhookSink{url: n.URL, timeout: timeout})
	}
	return sinks
}

// sinkFor is --notify's target: an http(s) URL is a webhook, anything else
// a command split at spaces (no shell).
func sinkFor(target, dir string) sink {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		return &webhookSink{url: target, timeout: notifyTimeout}
	}
	return &commandSink{argv: strings.Fields(target), dir: dir, timeout: notifyTimeout}
}

// checkNotifyTarget says what is wrong with a --notify target.
func checkNotifyTarget(target string) error {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		if u, err := url.Parse(target); err != nil || u.Host == "" {
			return fmt.Errorf("--notify %s: not a valid URL", target)
		}
		return nil
	}
	if len(strings.Fields(target)) == 0 {
		return fmt.Errorf("--notify needs a URL (http:// or https://) or a command")
	}
	return nil
}

// commandSink runs a command with the notice as JSON on its stdin.
type commandSink struct {
	argv    []string
	dir     string
	timeout time.Duration
}

func (c *commandSink) name() string { return "command " + c.argv[0] }

func (c *commandSink) send(ctx context.Context, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Dir = c.dir
	cmd.Stdin = bytes.NewReader(body)
	cmd.WaitDelay = time.Second // a child holding its pipes must not hold the notifier
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return 1, fmt.Errorf("%s did not finish within %s", c.argv[0], c.timeout)
		}
		return 1, fmt.Errorf("%s: %v", c.argv[0], err)
	}
	return 1, nil
}

// webhookSink POSTs the notice as JSON, trying again on a network error or
// a 5xx (or 429) answer, after notifyBackoff, doubled each time.
type webhookSink struct {
	url     string
	timeout time.Duration
}

// name is the URL's scheme and host: its path or query may hold a token.
func (w *webhookSink) name() string {
	u, err := url.Parse(w.url)
	if err != nil {
		return "webhook"
	}
	return "webhook " + u.Scheme + "://" + u.Host
}

func (w *webhookSink) send(ctx context.Context, body []byte) (int, error) {
	wait := notifyBackoff
	var err error
	for try := 1; ; try++ {
		var retry bool
		retry, err = w.post(ctx, body)
		if err == nil || !retry || try == notifyTries {
			return try, err
		}
		select {
		case <-ctx.Done():
			return try, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// post makes one try; retry says whether another one may succeed.
func (w *webhookSink) post(ctx context.Context, body []byte) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return false, errors.New("not a valid URL") // its text would show the URL
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "orch")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error // its text holds the whole URL: keep only why
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("no answer within %s", w.timeout)
		}
		return true, err
	}
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests, fmt.Errorf("the webhook answered %s", resp.Status)
}
