package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/schemas"
)

// The resources' URIs.
const (
	runsURI       = "orch://runs"
	runURIPrefix  = "orch://runs/"
	schemaURIBase = "orch://schemas/"
)

// addResources offers the run list, each run's status and the schemas as
// resources; the runs can be subscribed to (see watcher).
func (s *Server) addResources() {
	s.mcp.AddResource(&mcp.Resource{URI: runsURI, Name: "runs", Title: "Recent runs", MIMEType: "application/json",
		Description: "The recent runs, as orch status --output json lists them."}, s.readResource)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: runURIPrefix + "{id}", Name: "run", Title: "A run's status", MIMEType: "application/json",
		Description: "A run's status, as orch status RUN --output json prints it; subscribe to hear when it changes."}, s.readResource)
	for _, kind := range schemas.Kinds {
		s.mcp.AddResource(&mcp.Resource{URI: schemaURIBase + kind, Name: kind + "-schema", Title: "The " + kind + " JSON Schema",
			MIMEType: "application/schema+json"}, s.readResource)
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: schemaURIBase + "{kind}", Name: "schema", Title: "A kind's JSON Schema",
		MIMEType: "application/schema+json", Description: "kind: " + strings.Join(schemas.Kinds, ", ")}, s.readResource)
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	var text []byte
	var err error
	mime := "application/json"
	switch {
	case uri == runsURI:
		text, err = s.runsJSON(ctx)
	case strings.HasPrefix(uri, runURIPrefix):
		var st *control.RunStatus
		if st, err = s.ctl.Status(ctx, control.StatusRequest{Run: strings.TrimPrefix(uri, runURIPrefix)}); err == nil {
			var b bytes.Buffer
			err = st.WriteJSON(&b)
			text = b.Bytes()
		}
	case strings.HasPrefix(uri, schemaURIBase):
		mime = "application/schema+json"
		text, err = schemas.Bundle(strings.TrimPrefix(uri, schemaURIBase))
	default:
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		if k := control.KindOf(err); k == control.NotFound || k == control.Invalid || strings.HasPrefix(uri, schemaURIBase) {
			return nil, fmt.Errorf("%s: %w", uri, err)
		}
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(text)}}}, nil
}

// fingerprint is what a subscribed resource is now, to tell whether it has
// changed since prev (what it was, "" at the subscription): a run's last
// event (read on from prev's), the run list as JSON; a schema never
// changes.
func (s *Server) fingerprint(ctx context.Context, uri, prev string) (string, error) {
	switch {
	case uri == runsURI:
		b, err := s.runsJSON(ctx)
		return string(b), err
	case strings.HasPrefix(uri, runURIPrefix):
		id, err := s.ctl.Resolve(ctx, strings.TrimPrefix(uri, runURIPrefix))
		if err != nil {
			return "", fmt.Errorf("%s: %w", uri, err)
		}
		after, _ := strconv.ParseInt(prev, 10, 64)
		for {
			events, err := s.ctl.Events(ctx, control.EventsRequest{Run: id, After: after})
			if err != nil {
				return "", err
			}
			if len(events) > 0 {
				after = events[len(events)-1].Seq
			}
			if len(events) < control.PageSize {
				return strconv.FormatInt(after, 10), nil
			}
		}
	case strings.HasPrefix(uri, schemaURIBase):
		if _, err := schemas.Bundle(strings.TrimPrefix(uri, schemaURIBase)); err != nil {
			return "", fmt.Errorf("%s: %w", uri, err)
		}
		return "schema", nil
	}
	return "", mcp.ResourceNotFoundError(uri)
}
