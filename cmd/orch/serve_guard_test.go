//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/store"
)

// TestServeLoopbackToken: on loopback (orch serve's default) a token is in
// force for what changes things: a POST without it is refused (401, its
// connection closed), with it it goes through; reads need none, and a
// foreign Host is still refused (DNS rebinding). Issue 27, item 8.
func TestServeLoopbackToken(t *testing.T) {
	db := emptyDB(t)
	u := serveDBAs(t, db, "s3cret", true, nil).URL
	if code, _ := get(t, u+"/api/runs"); code != 200 {
		t.Errorf("a read without the token on loopback: %d, want 200", code)
	}
	if code, _ := get(t, u+"/"); code != 200 {
		t.Errorf("the page without the token on loopback: %d, want 200", code)
	}
	req, _ := http.NewRequest("POST", u+"/api/runs/last/stop", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !resp.Close {
		t.Errorf("a POST without the token on loopback: %d (connection closed: %v), want 401 and the connection closed", resp.StatusCode, resp.Close)
	}
	if code, body := post(t, u+"/api/runs/last/stop", "", "Authorization", "Bearer s3cret"); code == 401 || code == 403 {
		t.Errorf("a POST with the token: %d %s", code, body)
	}
	req, _ = http.NewRequest("GET", u+"/api/runs", nil)
	req.Host = "evil.example:80"
	if code, _ := do(t, req); code != 403 {
		t.Errorf("a read for a foreign Host: %d, want 403", code)
	}
}

// serveProc is a real orch serve process.
type serveProc struct {
	cmd   *exec.Cmd
	base  string // http://127.0.0.1:PORT
	token string // in the URL it printed ("" without)
}

// startServeProc starts orch serve (this test binary as orch) with args
// and reads the URL it prints.
func startServeProc(t testing.TB, db string, args ...string) *serveProc {
	t.Helper()
	return startServeIn(t, "", db, args...)
}

// startServeIn is startServeProc in the directory dir ("": this one).
func startServeIn(t testing.TB, dir, db string, args ...string) *serveProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Args[0] = "orch"
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), "http://"); i >= 0 {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			url, token, _ := strings.Cut(sc.Text()[i:], "/?token=")
			return &serveProc{cmd: cmd, base: strings.TrimSuffix(url, "/"), token: token}
		}
	}
	t.Fatalf("orch serve printed no URL (%v)", sc.Err())
	return nil
}

// emptyDB makes a run database with no runs.
func emptyDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "orch.db")
	w, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	return db
}

// TestServeTokenPerStart: orch serve on loopback generates a token at each
// start and prints it in its URL; a POST needs it. --no-token goes without,
// and is refused off loopback.
func TestServeTokenPerStart(t *testing.T) {
	db := emptyDB(t)
	a, b := startServeProc(t, db), startServeProc(t, db)
	if len(a.token) < 32 || a.token == b.token {
		t.Fatalf("tokens printed: %q and %q, want a new one at each start", a.token, b.token)
	}
	if code, _ := post(t, a.base+"/api/runs/nope/stop", ""); code != 401 {
		t.Errorf("POST without the token: %d, want 401", code)
	}
	if code, _ := post(t, a.base+"/api/runs/nope/stop", "", "Authorization", "Bearer "+a.token); code != 404 {
		t.Errorf("POST with the token (for a run that does not exist): %d, want 404", code)
	}
	if code, _ := get(t, a.base+"/api/runs"); code != 200 {
		t.Errorf("GET without the token on loopback: %d, want 200", code)
	}
	open := startServeProc(t, db, "--no-token")
	if open.token != "" {
		t.Errorf("--no-token printed a token: %q", open.token)
	}
	if code, _ := post(t, open.base+"/api/runs/nope/stop", ""); code != 404 {
		t.Errorf("--no-token: POST without a token: %d, want 404 (no such run)", code)
	}
	code, _, stderr := runOrch(t, "", "serve", "--db", db, "--addr", "0.0.0.0:0", "--no-token")
	if code != exitUsage || !strings.Contains(stderr, "--no-token: only on loopback") {
		t.Errorf("--no-token off loopback: exit %d %s", code, stderr)
	}
}

// idleConnsMain is orch-idle-conns ADDR N: it opens N connections to ADDR,
// makes one request on each (GET /api/runs, without a token) and keeps it
// open and idle after the answer, as a keep-alive client does; it says
// "ready N" on stdout with how many it opened, then keeps them until its
// stdin ends.
func idleConnsMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: orch-idle-conns ADDR N")
		return 2
	}
	n, _ := strconv.Atoi(args[1])
	var conns []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", args[0], 5*time.Second)
		if err != nil {
			break // this process is out of room: what is open stays
		}
		conns = append(conns, c)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "GET /api/runs HTTP/1.1\r\nHost: "+args[0]+"\r\n\r\n"); err != nil {
			continue
		}
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	fmt.Printf("ready %d\n", len(conns))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// TestServeIdleConnections: 20,000 keep-alive connections made to a real
// orch serve and kept idle after a request (by two other processes: each
// holds 10,000) do not starve it: an authorised request made after them
// answers. Issue 27, item 7. The wait is a hang guard; the time taken is
// logged.
func TestServeIdleConnections(t *testing.T) {
	db := emptyDB(t)
	s := startServeProc(t, db)
	addr := strings.TrimPrefix(s.base, "http://")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	for range 2 {
		h := exec.Command(exe, addr, "10000")
		h.Args[0] = "orch-idle-conns"
		stdin, _ := h.StdinPipe()
		out, _ := h.StdoutPipe()
		h.Stderr = os.Stderr
		if err := h.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdin.Close(); _ = h.Wait() })
		line, _ := bufio.NewReader(out).ReadString('\n')
		var n int
		if _, err := fmt.Sscanf(line, "ready %d", &n); err != nil {
			t.Fatalf("orch-idle-conns said %q", line)
		}
		opened += n
	}
	t.Logf("%d idle connections opened", opened)
	if opened < 20000 {
		t.Fatalf("only %d of 20,000 connections could be opened", opened)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a hang guard
	defer cancel()
	asked := time.Now()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/api/runs/nope/stop", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("an authorised request after 20,000 idle connections: %v", err)
	}
	resp.Body.Close()
	t.Logf("an authorised request after %d idle connections answered %d in %s", opened, resp.StatusCode, time.Since(asked).Round(time.Millisecond))
	if resp.StatusCode != 404 {
		t.Errorf("the authorised request answered %d, want 404 (no such run)", resp.StatusCode)
	}
	page, err := client.Get(s.base + "/")
	if err != nil || page.StatusCode != 200 {
		t.Fatalf("the page after 20,000 idle connections: %v %v", err, page)
	}
	page.Body.Close()
}
