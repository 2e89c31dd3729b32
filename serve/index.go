package serve

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"path"
)

// The page's assets are embedded: the server never reads a file from disk.
// The page is a small single-page app (plain JS, no build step) that reads
// the JSON API and the event streams; it puts everything agents wrote in
// with textContent, never as HTML.
//
//go:embed assets
var serveAssets embed.FS

var indexPage = template.Must(template.ParseFS(serveAssets, "assets/index.html"))

// pageCSP allows the page's own scripts, styles and requests only: no
// inline script, no other origin.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

var assetTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
}

// index is the page. With a token in force, its asset URLs carry it (the
// browser sends no Authorization header for a script tag); the page's own
// requests send it as Authorization: Bearer.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	token := ""
	if s.token != "" {
		token = "?token=" + url.QueryEscape(s.token)
	}
	var page bytes.Buffer
	if err := indexPage.Execute(&page, struct{ Token string }{token}); err != nil {
		failed(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(page.Bytes())
}

// asset serves one of the page's scripts or styles, by its name only.
func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ctype, ok := assetTypes[path.Ext(name)]
	if !ok || name != path.Base(name) {
		httpError(w, http.StatusNotFound, "no such asset")
		return
	}
	body, err := serveAssets.ReadFile("assets/" + name)
	if err != nil {
		httpError(w, http.StatusNotFound, "no such asset")
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(body)
}
