package lsp

import (
	"encoding/json"
	"strings"
)

// Position is a zero-based line and a character offset in UTF-16 code
// units, as the protocol counts them.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a span between two positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// Diagnostic is one problem the server reports.
type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity"` // 1 error, 2 warning, 3 information, 4 hint
	Source   string `json:"source"`
	Message  string `json:"message"`
}

// SeverityName names a diagnostic's severity.
func SeverityName(s int) string {
	switch s {
	case 1:
		return "error"
	case 2:
		return "warning"
	case 3:
		return "info"
	case 4:
		return "hint"
	}
	return "diagnostic"
}

// Locations decodes the result of textDocument/definition or
// /references: null, a Location, a list of them, or a list of
// LocationLinks.
func Locations(raw json.RawMessage) []Location {
	var one Location
	if json.Unmarshal(raw, &one) == nil && one.URI != "" {
		return []Location{one}
	}
	var list []struct {
		Location
		TargetURI            string `json:"targetUri"`
		TargetSelectionRange Range  `json:"targetSelectionRange"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	out := make([]Location, 0, len(list))
	for _, l := range list {
		switch {
		case l.URI != "":
			out = append(out, l.Location)
		case l.TargetURI != "":
			out = append(out, Location{URI: l.TargetURI, Range: l.TargetSelectionRange})
		}
	}
	return out
}

// HoverText decodes the contents of a textDocument/hover result: markup,
// a plain string, a marked string or a list of them.
func HoverText(raw json.RawMessage) string {
	var h struct {
		Contents json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(raw, &h) != nil || len(h.Contents) == 0 {
		return ""
	}
	return markup(h.Contents)
}

func markup(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var v struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(raw, &v) == nil && v.Value != "" {
		return v.Value
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		parts := make([]string, 0, len(list))
		for _, item := range list {
			if t := markup(item); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n\n")
	}
	return ""
}
