package serve

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// The page's assets are embedded: the server never reads a file from disk.
// The page is a small single-page app of native ES modules (no build step)
// that reads the JSON API and the event streams; it puts everything agents
// wrote in with textContent, never as HTML. events.js, the event types it
// reads, is generated from runner/record's:
//
//go:generate go test -run TestEventsJS -update .
//go:embed assets
var assets embed.FS

// pageCSP allows the page's own scripts, styles and requests only: no
// inline script (but the import map, by its hash), no other origin.
const pageCSP = "default-src 'none'; script-src 'self'%s; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

var assetTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
}

// page is the index page as this server gives it, and its CSP.
type page struct {
	html []byte
	csp  string
}

// newPage makes the index page. With a token in force, its asset URLs
// carry it (the browser sends no Authorization header for a script or a
// module it imports): the stylesheet's and the first module's in the tags,
// the others' through an import map (which CSP allows by its hash); the
// page's own requests send it as Authorization: Bearer.
func newPage(token string) (*page, error) {
	src, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return nil, err
	}
	query, importMap, csp := "", "", strings.Replace(pageCSP, "%s", "", 1)
	if token != "" {
		query = "?token=" + url.QueryEscape(token)
		entries, err := assets.ReadDir("assets")
		if err != nil {
			return nil, err
		}
		imports := map[string]string{}
		for _, e := range entries {
			if path.Ext(e.Name()) == ".js" {
				imports["./assets/"+e.Name()] = "./assets/" + e.Name() + query
			}
		}
		m, err := json.Marshal(map[string]any{"imports": imports})
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(m)
		importMap = `<script type="importmap">` + string(m) + `</script>`
		csp = strings.Replace(pageCSP, "%s", " 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", 1)
	}
	html := strings.NewReplacer("{{.Token}}", query, "{{.ImportMap}}", importMap).Replace(string(src))
	return &page{html: []byte(html), csp: csp}, nil
}

// index is the page.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	s.pageOnce.Do(func() { s.page, s.pageErr = newPage(s.token) })
	if s.pageErr != nil {
		failed(w, s.pageErr)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", s.page.csp)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(s.page.html)
}

// asset serves one of the page's scripts or styles, by its name only.
func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ctype, ok := assetTypes[path.Ext(name)]
	if !ok || name != path.Base(name) {
		httpError(w, http.StatusNotFound, "no such asset")
		return
	}
	body, err := assets.ReadFile("assets/" + name)
	if err != nil {
		httpError(w, http.StatusNotFound, "no such asset")
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Security-Policy", strings.Replace(pageCSP, "%s", "", 1))
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(body)
}
