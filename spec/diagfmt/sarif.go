package diagfmt

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orch-cli/orch/spec"
)

// SARIF 2.1.0, the subset GitHub code scanning reads.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool       sarifTool     `json:"tool"`
	ColumnKind string        `json:"columnKind"`
	Results    []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
	DefaultConfig    sarifConfig  `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	Physical sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	Artifact sarifArtifact `json:"artifactLocation"`
	Region   *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// SARIF writes a SARIF 2.1.0 log with one rule per diagnostic code used.
// Columns are counted in Unicode code points, as yaml.v3 counts them.
func SARIF(w io.Writer, ds spec.Diagnostics, version string) error {
	codes := map[string]spec.Severity{}
	for _, d := range ds {
		if sev, seen := codes[d.Code]; !seen || d.Severity < sev {
			codes[d.Code] = d.Severity
		}
	}
	ids := make([]string, 0, len(codes))
	for c := range codes {
		ids = append(ids, c)
	}
	sort.Strings(ids)
	index := map[string]int{}
	rules := make([]sarifRule, len(ids))
	for i, id := range ids {
		index[id] = i
		desc := spec.Codes[id]
		if desc == "" {
			desc = id
		}
		rules[i] = sarifRule{ID: id, ShortDescription: sarifMessage{desc}, DefaultConfig: sarifConfig{level(codes[id])}}
	}
	results := make([]sarifResult, 0, len(ds))
	for _, d := range ds {
		loc := sarifPhysical{Artifact: sarifArtifact{URI: fileURI(d.Pos.File)}}
		if !filepath.IsAbs(d.Pos.File) {
			loc.Artifact.URIBaseID = "%SRCROOT%"
		}
		if d.Pos.Line > 0 {
			loc.Region = &sarifRegion{StartLine: d.Pos.Line, StartColumn: d.Pos.Col}
		}
		results = append(results, sarifResult{
			RuleID: d.Code, RuleIndex: index[d.Code], Level: level(d.Severity),
			Message: sarifMessage{d.Message}, Locations: []sarifLocation{{loc}},
		})
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:       sarifTool{sarifDriver{Name: "orch", Version: version, InformationURI: "https://github.com/orch-cli/orch", Rules: rules}},
			ColumnKind: "unicodeCodePoints",
			Results:    results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

func level(s spec.Severity) string {
	if s == spec.Warning {
		return "warning"
	}
	return "error"
}

// fileURI turns a file path into a relative (or file://) URI reference.
func fileURI(p string) string {
	slash := filepath.ToSlash(p)
	parts := strings.Split(slash, "/")
	for i, part := range parts {
		parts[i] = url.PathEscape(part)
	}
	u := strings.Join(parts, "/")
	u = strings.TrimPrefix(u, "./")
	if filepath.IsAbs(p) {
		return "file://" + u
	}
	return u
}
