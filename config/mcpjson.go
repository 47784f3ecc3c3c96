package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
)

// mcpJSON is Claude Code's project .mcp.json. Unknown fields are ignored so
// a file written for Claude works unchanged.
type mcpJSON struct {
	MCPServers map[string]mcpServer `json:"mcpServers"`
}

type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// parseMCPJSON turns .mcp.json into plugins sorted by name, each with
// Source set to path.
func parseMCPJSON(path string, data []byte) ([]Plugin, error) {
	var doc mcpJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &FileError{File: path, Line: jsonErrorLine(data, err), Err: err}
	}
	names := make([]string, 0, len(doc.MCPServers))
	for name := range doc.MCPServers {
		names = append(names, name)
	}
	sort.Strings(names)
	plugins := make([]Plugin, 0, len(names))
	for _, name := range names {
		s := doc.MCPServers[name]
		typ := s.Type
		if typ == "streamable-http" { // Claude's alias for the same transport
			typ = TransportHTTP
		}
		plugins = append(plugins, Plugin{
			Name: name, Type: typ, Command: s.Command, Args: s.Args, Env: s.Env,
			URL: s.URL, Headers: s.Headers, Source: path,
		})
	}
	return plugins, nil
}

// jsonErrorLine finds the line of a JSON decoding error, 0 when unknown.
func jsonErrorLine(data []byte, err error) int {
	var off int64
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	default:
		return 0
	}
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// readMCPJSON merges the project's .mcp.json, when present, into the
// plugins read so far: its entries replace same-name user entries and are
// in turn replaced by the project config's.
func (l *loader) readMCPJSON(path string) {
	data, found, err := readFile(path)
	if !found {
		return
	}
	if err != nil {
		l.p.errs = append(l.p.errs, &FileError{File: path, Err: err})
		return
	}
	l.c.sources = append(l.c.sources, path)
	plugins, err := parseMCPJSON(path, data)
	if err != nil {
		l.p.errs = append(l.p.errs, err)
		return
	}
	if l.untrustedDir != "" && len(plugins) > 0 {
		l.p.errs = append(l.p.errs, untrustedError(path, "its servers would start processes", l.untrustedDir))
		return
	}
	l.c.Plugins = mergeEntries(&l.p, path, "plugins", l.c.Plugins, plugins, func(p *Plugin) string { return p.Name })
}

// WorkspacePlugins reads the MCP servers a repository declares in its own
// .mcp.json at the root of dir, expanded and validated like [[plugins]]
// (${REASONIX_WORKSPACE_ROOT} is left for the caller). A missing file is no
// servers. Callers load these only when the service allows it: a checkout
// must not widen what a task may run by itself.
func WorkspacePlugins(dir string, env func(string) (string, bool)) ([]Plugin, error) {
	if env == nil {
		// The process environment, which no longer holds the secrets
		// (secretenv.Seal): a repository's own servers cannot name the
		// service's keys in ${VAR}.
		env = os.LookupEnv
	}
	path := filepath.Join(dir, MCPJSONFile)
	data, found, err := readFile(path)
	if !found {
		return nil, nil
	}
	if err != nil {
		return nil, &FileError{File: path, Err: err}
	}
	plugins, err := parseMCPJSON(path, data)
	if err != nil {
		return nil, err
	}
	var p problems
	e := expander{lookup: env, keep: keepWorkspaceVars, p: &p}
	for i := range plugins {
		pl := &plugins[i]
		pl.applyDefaults()
		label := entryLabel("mcpServers", pl.Name, i)
		e.str(&pl.Command, path, label+".command")
		e.list(pl.Args, path, label+".args")
		e.table(pl.Env, path, label+".env")
		e.str(&pl.URL, path, label+".url")
		e.table(pl.Headers, path, label+".headers")
		pl.validate(label, &p)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return plugins, nil
}
