package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"reasonix/agent"
	"reasonix/policy"
)

// Bounds of the @ references of one prompt.
const (
	maxReferences       = 20
	maxReferenceBytes   = 32 << 10  // one file's text
	maxReferencesBytes  = 128 << 10 // all blocks together
	maxReferenceEntries = 200       // one directory's listing
	maxReferenceToken   = 1024
)

// Reference is one @ reference of a prompt: @path (a file or directory
// of the workspace) or @server:uri (a resource of an MCP server).
type Reference struct {
	Text   string // as written, without the @
	Server string // the MCP server, for a resource
	URI    string // the resource's URI
}

// ScanReferences finds a prompt's @ references: an @ at the start or
// after white space, up to the next white space, with trailing
// punctuation (.,;:!?)]}'") left out; an address such as a@b.c is none.
// `@name:scheme:…` with a server-like name is an MCP resource, any other
// a path. Duplicates count once; at most 20 are returned.
func ScanReferences(prompt string) []Reference {
	var out []Reference
	for i := 0; i < len(prompt) && len(out) < maxReferences; i++ {
		if prompt[i] != '@' {
			continue
		}
		if i > 0 {
			r, _ := utf8.DecodeLastRuneInString(prompt[:i])
			if !unicode.IsSpace(r) && r != '(' {
				continue
			}
		}
		j := i + 1
		for j < len(prompt) {
			r, n := utf8.DecodeRuneInString(prompt[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		tok := strings.TrimRight(prompt[i+1:j], ".,;:!?)]}'\"`")
		i = j - 1
		if tok == "" || len(tok) > maxReferenceToken || !utf8.ValidString(tok) {
			continue
		}
		ref := Reference{Text: tok}
		if name, uri, ok := strings.Cut(tok, ":"); ok && serverName(name) && hasScheme(uri) {
			ref.Server, ref.URI = name, uri
		}
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// serverName reports whether s can name an MCP server.
func serverName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// hasScheme reports whether s starts with a URI scheme and its colon.
func hasScheme(s string) bool {
	scheme, _, ok := strings.Cut(s, ":")
	if !ok || scheme == "" || !(scheme[0] >= 'a' && scheme[0] <= 'z' || scheme[0] >= 'A' && scheme[0] <= 'Z') {
		return false
	}
	for _, r := range scheme {
		if !(r == '+' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// ReferenceUse says what became of one reference: resolved (Kind file,
// directory or resource, Bytes of text) or refused (Refused, why). A path
// that does not exist is no reference: it is left out and stays text.
type ReferenceUse struct {
	Ref     string `json:"ref"`
	Kind    string `json:"kind,omitempty"`
	Bytes   int    `json:"bytes,omitempty"`
	Refused string `json:"refused,omitempty"`
}

// EventReferences lists the @ references a prompt's text was given:
// Data is {"references": [ReferenceUse]}.
const EventReferences agent.EventType = "references"

// ExpandReferences returns prompt with a tagged block appended for each
// of its @ references: `<reference path="…">` with a file's text or a
// directory's listing, `<reference resource="server:uri">` with an MCP
// resource's text, and a refused one as `<reference … refused="why"/>`.
// A path must lie inside the workspace (after symbolic links), outside
// forbid_read and every Read deny rule; ~ and absolute paths elsewhere
// are refused without looking. The prompt's own text is unchanged; one
// without references is returned as it is. An EventReferences goes to
// the session's Observer.
func (s *Session) ExpandReferences(ctx context.Context, prompt string) string {
	refs := ScanReferences(prompt)
	if len(refs) == 0 {
		return prompt
	}
	var b strings.Builder
	var uses []ReferenceUse
	budget := maxReferencesBytes
	for _, r := range refs {
		var block string
		var use ReferenceUse
		if r.Server != "" {
			block, use = s.resourceBlock(ctx, r)
		} else {
			block, use = s.pathBlock(r.Text)
		}
		if block == "" {
			continue
		}
		if len(block) > budget {
			use = ReferenceUse{Ref: r.Text, Refused: "over the 128 KiB bound of references"}
			block = fmt.Sprintf("<reference ref=%q refused=%q/>", r.Text, use.Refused)
		}
		budget -= len(block)
		b.WriteString("\n\n")
		b.WriteString(block)
		uses = append(uses, use)
	}
	if len(uses) == 0 {
		return prompt
	}
	if s.cfg.Observer != nil {
		s.cfg.Observer(agent.Event{Type: EventReferences, Data: map[string]any{"references": uses}})
	}
	return prompt + b.String()
}

// pathBlock resolves @path; "" when the path does not exist.
func (s *Session) pathBlock(p string) (string, ReferenceUse) {
	refuse := func(why string) (string, ReferenceUse) {
		return fmt.Sprintf("<reference path=%q refused=%q/>", p, why), ReferenceUse{Ref: p, Refused: why}
	}
	root := s.cfg.Workdir
	if strings.HasPrefix(p, "~") {
		return refuse("only paths inside the workspace can be referenced")
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	if rel, err := filepath.Rel(root, filepath.Clean(abs)); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return refuse("only paths inside the workspace can be referenced")
	}
	args, _ := json.Marshal(map[string]string{"path": abs})
	if s.Policy != nil && s.Policy.Evaluate(policy.Query{Tool: "read_file", ReadOnly: true, Args: args, Workdir: root}).Decision == policy.Deny {
		return refuse("a deny rule covers it")
	}
	var real string
	var err error
	if s.Confinement != nil {
		real, err = s.Confinement.ReadPath(abs)
	} else {
		real, err = filepath.EvalSymlinks(abs)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", ReferenceUse{}
	}
	if err != nil {
		return refuse("it is off limits for this agent")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return refuse("only paths inside the workspace can be referenced")
	}
	st, err := os.Stat(real)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ReferenceUse{}
	}
	if err != nil {
		return refuse("it cannot be read")
	}
	if st.IsDir() {
		return s.dirBlock(p, real)
	}
	if !st.Mode().IsRegular() {
		return refuse("it is not a regular file")
	}
	f, err := os.Open(real)
	if err != nil {
		return refuse("it cannot be read")
	}
	defer f.Close()
	data := make([]byte, maxReferenceBytes+1)
	n, _ := f.Read(data)
	for n < len(data) {
		m, err := f.Read(data[n:])
		if m == 0 || err != nil {
			break
		}
		n += m
	}
	data = data[:n]
	if slices.Contains(data[:min(n, 8000)], 0) {
		return refuse("it is a binary file")
	}
	text, cut := string(data), ""
	if n > maxReferenceBytes {
		text = strings.ToValidUTF8(text[:maxReferenceBytes], "")
		cut = ` truncated="true"`
	}
	text = s.cfg.Redactor.String(text)
	return fmt.Sprintf("<reference path=%q%s>\n%s\n</reference>", p, cut, strings.TrimRight(text, "\n")),
		ReferenceUse{Ref: p, Kind: "file", Bytes: len(text)}
}

// dirBlock lists a directory's entries, directories with a trailing /.
func (s *Session) dirBlock(p, real string) (string, ReferenceUse) {
	entries, err := os.ReadDir(real)
	if err != nil {
		return fmt.Sprintf("<reference path=%q refused=%q/>", p, "it cannot be read"), ReferenceUse{Ref: p, Refused: "it cannot be read"}
	}
	var lines []string
	for _, e := range entries {
		if len(lines) == maxReferenceEntries {
			lines = append(lines, fmt.Sprintf("… and %d more", len(entries)-maxReferenceEntries))
			break
		}
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		lines = append(lines, name)
	}
	text := strings.Join(lines, "\n")
	return fmt.Sprintf("<reference path=%q kind=\"directory\">\n%s\n</reference>", p, text),
		ReferenceUse{Ref: p, Kind: "directory", Bytes: len(text)}
}

// resourceBlock reads @server:uri through the session's MCP servers.
func (s *Session) resourceBlock(ctx context.Context, r Reference) (string, ReferenceUse) {
	refuse := func(why string) (string, ReferenceUse) {
		return fmt.Sprintf("<reference resource=%q refused=%q/>", r.Text, why), ReferenceUse{Ref: r.Text, Refused: why}
	}
	if s.plugins == nil {
		return refuse("no MCP server of that name is configured")
	}
	text, found, err := s.plugins.ReadResource(ctx, r.Server, r.URI)
	switch {
	case !found:
		return refuse("no MCP server of that name is configured")
	case err != nil:
		s.cfg.Logger.Warn("session: reading an MCP resource", "server", r.Server, "uri", r.URI, "err", err)
		return refuse("the server could not read it")
	}
	text = s.cfg.Redactor.String(text)
	return fmt.Sprintf("<reference resource=%q>\n%s\n</reference>", r.Text, strings.TrimRight(text, "\n")),
		ReferenceUse{Ref: r.Text, Kind: "resource", Bytes: len(text)}
}
