package main

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
)

// The page's assets are embedded: the server never reads a file from disk.
//
//go:embed serve_assets/index.html
var serveAssets embed.FS

var indexPage = template.Must(template.ParseFS(serveAssets, "serve_assets/index.html"))

// index lists the runs and the API. html/template escapes every value.
func (s *server) index(w http.ResponseWriter, r *http.Request) {
	body, err := capture(func(io *streams) error {
		_, err := showRuns(r.Context(), io, s.db, &statusOptions{output: "json", limit: 100})
		return err
	})
	if err != nil {
		failed(w, err)
		return
	}
	var runs []runJSON
	if err := json.Unmarshal(body, &runs); err != nil {
		failed(w, err)
		return
	}
	token := ""
	if s.token != "" {
		token = "?token=" + url.QueryEscape(s.token)
	}
	var page bytes.Buffer
	data := struct {
		DB    string
		Runs  []runJSON
		Token string
	}{s.db.Path(), runs, token}
	if err := indexPage.Execute(&page, data); err != nil {
		failed(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_, _ = w.Write(page.Bytes())
}
