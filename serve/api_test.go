package serve

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/store"
)

// TestStatusOfErrors: control's error kinds become HTTP statuses here, in
// one place; an action's error with no kind is the run's state refusing
// it (409), unless the database is damaged (500).
func TestStatusOfErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{control.As(control.Refused, errors.New("x")), http.StatusConflict},
		{control.As(control.Invalid, errors.New("x")), http.StatusBadRequest},
		{control.As(control.NotFound, errors.New("x")), http.StatusNotFound},
		{control.As(control.Unsupported, errors.New("x")), http.StatusNotImplemented},
		{&control.HandOverError{Code: 2, Output: "x"}, http.StatusBadRequest},
		{&control.HandOverError{Code: 1, Output: "x"}, http.StatusConflict},
		{errors.New("x"), http.StatusInternalServerError},
	} {
		if got := status(c.err); got != c.code {
			t.Errorf("status(%v) = %d, want %d", c.err, got, c.code)
		}
	}
	for _, c := range []struct {
		err  error
		code int
	}{
		{errors.New("run r1 is already completed"), http.StatusConflict},
		{fmt.Errorf("reading: %w", store.ErrDamaged), http.StatusInternalServerError},
		{control.As(control.Invalid, errors.New("x")), http.StatusBadRequest},
	} {
		w := &recorder{header: http.Header{}}
		actionFailed(w, c.err)
		if w.code != c.code {
			t.Errorf("actionFailed(%v): %d, want %d", c.err, w.code, c.code)
		}
	}
}

type recorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// TestPageImportMap: with a token the page's import map gives every module
// the token, and the page's policy allows that map by its hash (and no
// other inline script); without one there is no map and no hash.
func TestPageImportMap(t *testing.T) {
	p, err := newPage("a b&c")
	if err != nil {
		t.Fatal(err)
	}
	html := string(p.html)
	m := regexp.MustCompile(`<script type="importmap">(.*)</script>`).FindStringSubmatch(html)
	if m == nil || !strings.Contains(m[1], `"./assets/run.js":"./assets/run.js?token=a+b%26c"`) || !strings.Contains(html, `src="assets/app.js?token=a+b%26c"`) {
		t.Fatalf("the page with a token:\n%s", html)
	}
	sum := sha256.Sum256([]byte(m[1]))
	if want := "script-src 'self' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';"; !strings.Contains(p.csp, want) || strings.Contains(p.csp, "unsafe") {
		t.Errorf("CSP %q, want %q", p.csp, want)
	}
	p, err = newPage("")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p.html), "importmap") || strings.Contains(string(p.html), "{{") || strings.Contains(p.csp, "sha256") {
		t.Errorf("the page without a token:\n%s\nCSP %q", p.html, p.csp)
	}
}
