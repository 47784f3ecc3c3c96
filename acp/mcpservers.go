package acp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"reasonix/config"
)

// mcpServer is one entry of session/new's mcpServers in any of the shapes
// editors send: stdio (no type, or "stdio"), Streamable HTTP ("http") and
// legacy SSE ("sse"); env and headers either as ACP's [{name, value}] list
// or as the older {"NAME": "value"} map.
type mcpServer struct {
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Command string          `json:"command"`
	Args    []string        `json:"args"`
	Env     json.RawMessage `json:"env"`
	URL     string          `json:"url"`
	Headers json.RawMessage `json:"headers"`
}

// pluginsFrom turns a request's mcpServers into plugin entries, validated
// as strictly as [[plugins]] in a file; the error names the entry.
func pluginsFrom(raw json.RawMessage) ([]config.Plugin, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []mcpServer
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("mcpServers: %v", err)
	}
	out := make([]config.Plugin, 0, len(list))
	for i, s := range list {
		p, err := s.plugin()
		if err != nil {
			return nil, fmt.Errorf("mcpServers[%d]: %w", i, err)
		}
		if slices.ContainsFunc(out, func(q config.Plugin) bool { return q.Name == p.Name }) {
			return nil, fmt.Errorf("mcpServers[%d]: the name %q is used twice", i, p.Name)
		}
		out = append(out, p)
	}
	return out, nil
}

func (s mcpServer) plugin() (config.Plugin, error) {
	p := config.Plugin{Name: strings.TrimSpace(s.Name), Source: "ACP session/new"}
	if p.Name == "" || strings.ContainsAny(p.Name, "/ \t\n") || strings.Contains(p.Name, "__") {
		return p, fmt.Errorf("name %q: give each server a short name without spaces, slashes or \"__\"", s.Name)
	}
	switch strings.ToLower(s.Type) {
	case "", "stdio":
		if strings.TrimSpace(s.Command) == "" {
			return p, fmt.Errorf("server %q: a stdio server needs a command", p.Name)
		}
		env, err := pairs(s.Env, "env")
		if err != nil {
			return p, fmt.Errorf("server %q: %w", p.Name, err)
		}
		p.Type, p.Command, p.Args, p.Env = "stdio", s.Command, s.Args, env
	case "http", "sse":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return p, fmt.Errorf("server %q: url must be an http(s) URL", p.Name)
		}
		headers, err := pairs(s.Headers, "headers")
		if err != nil {
			return p, fmt.Errorf("server %q: %w", p.Name, err)
		}
		p.Type, p.URL, p.Headers = strings.ToLower(s.Type), s.URL, headers
	default:
		return p, fmt.Errorf("server %q: unknown type %q (stdio, http or sse)", p.Name, s.Type)
	}
	return p, nil
}

// pairs reads env or headers in either shape.
func pairs(raw json.RawMessage, field string) (map[string]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	if err := json.Unmarshal(raw, &list); err == nil {
		m := make(map[string]string, len(list))
		for _, kv := range list {
			if kv.Name == "" {
				return nil, fmt.Errorf("%s: an entry has no name", field)
			}
			m[kv.Name] = kv.Value
		}
		return m, nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: a [{name, value}] list or a {name: value} object", field)
	}
	return m, nil
}
