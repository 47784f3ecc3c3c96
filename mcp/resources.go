package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxResourceText bounds the text of one resource read.
const MaxResourceText = 64 << 10

// Resource is one resource a server lists.
type Resource struct {
	Server      string
	URI         string
	Name        string
	Description string
	MIMEType    string
}

// maxResources bounds the resources listed per server.
const maxResources = 500

// Resources lists the resources of every server that is (or becomes,
// within ctx) ready and offers resources (resources/list); a server that
// fails or offers none is left out.
func (m *Manager) Resources(ctx context.Context) []Resource {
	var out []Resource
	for _, s := range m.servers {
		c, err := s.ready(ctx)
		if err != nil || !offersResources(c) {
			continue
		}
		n := 0
		for r, err := range c.session.Resources(ctx, nil) {
			if err != nil || n == maxResources {
				break
			}
			n++
			out = append(out, Resource{Server: s.cfg.Name, URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType})
		}
	}
	return out
}

// ReadResource reads uri from the server named server (resources/read)
// and returns its text contents joined by blank lines; binary contents
// are noted, not inlined. found is false when no such server is
// configured; a text over MaxResourceText is an error.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (text string, found bool, err error) {
	s := m.byName(server)
	if s == nil {
		return "", false, nil
	}
	c, err := s.ready(ctx)
	if err != nil {
		return "", true, err
	}
	if !offersResources(c) {
		return "", true, fmt.Errorf("mcp: server %q offers no resources", server)
	}
	res, err := c.session.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", true, fmt.Errorf("mcp: server %q: resource %q: %w", server, uri, err)
	}
	var parts []string
	size := 0
	for _, rc := range res.Contents {
		if rc == nil {
			continue
		}
		p := rc.Text
		if p == "" && len(rc.Blob) > 0 {
			p = fmt.Sprintf("[binary resource %s %s, %d bytes left out]", rc.URI, rc.MIMEType, len(rc.Blob))
		}
		size += len(p)
		if size > MaxResourceText {
			return "", true, fmt.Errorf("mcp: server %q: resource %q is longer than %d bytes", server, uri, MaxResourceText)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "\n\n"), true, nil
}

func offersResources(c *conn) bool {
	ir := c.session.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Resources != nil
}
