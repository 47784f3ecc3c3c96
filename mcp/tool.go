package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"reasonix/agent"
)

// ProgressFunc receives a call's progress as an agent.EventToolProgress
// event (Call.Name set to the qualified tool name, Text the progress line).
// ctx is the ctx passed to the tool's Execute, so the harness can tell which
// call it belongs to and fill in Call.ID. It is called from the connection's
// reader and must not block.
type ProgressFunc func(ctx context.Context, ev agent.Event)

// Tool is a remote MCP tool adapted to agent.Tool. It is safe for
// concurrent use; calls go through the server's shared connection and its
// concurrency policy.
type Tool struct {
	srv         *server
	name        string // mcp__<server>__<tool>
	remote      string
	description string
	schema      json.RawMessage
	readOnly    bool
	destructive bool
	progress    ProgressFunc
}

var (
	_ agent.Tool         = (*Tool)(nil)
	_ agent.ReadOnlyTool = (*Tool)(nil)
)

// maxToolName is the longest function name model APIs accept (OpenAI's
// limit); one longer tool name gets every request of a run rejected.
const maxToolName = 64

// ToolName is the agent-side name of the remote tool on server:
// mcp__<server>__<tool>, with every character other than ASCII letters,
// digits, '_' and '-' (spaces, dots, slashes…) replaced by '_' so that the
// name is valid for every model API. A name longer than 64 characters is
// cut to 55 and ends in '_' and 8 hex digits of a hash of server and tool,
// so that long names sharing a prefix stay apart.
func ToolName(server, tool string) string {
	name := "mcp__" + sanitizeName(server) + "__" + sanitizeName(tool)
	if len(name) <= maxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return name[:maxToolName-9] + "_" + hex.EncodeToString(sum[:4])
}

func sanitizeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func newTool(srv *server, t *sdk.Tool, progress ProgressFunc) *Tool {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	ro, destructive := false, true // MCP's defaults for a tool that says nothing
	if a := t.Annotations; a != nil {
		ro = a.ReadOnlyHint
		if a.DestructiveHint != nil {
			destructive = *a.DestructiveHint
		}
	}
	if ro {
		destructive = false // the hint only means something for writers
	}
	return &Tool{
		srv: srv, name: ToolName(srv.cfg.Name, t.Name), remote: t.Name, description: desc,
		schema: objectSchema(t.InputSchema), readOnly: ro, destructive: destructive, progress: progress,
	}
}

// objectSchema returns the tool's input schema as a JSON object of type
// "object", which agent.CanonicalSchema requires. MCP requires it too, but
// servers in the wild send none, omit the type or forget properties.
func objectSchema(in any) json.RawMessage {
	var obj map[string]any
	switch v := in.(type) {
	case map[string]any:
		obj = v
	case json.RawMessage:
		_ = json.Unmarshal(v, &obj)
	case nil:
	default:
		if raw, err := json.Marshal(v); err == nil {
			_ = json.Unmarshal(raw, &obj)
		}
	}
	if obj == nil {
		obj = map[string]any{}
	}
	out := make(map[string]any, len(obj)+2)
	for k, v := range obj {
		out[k] = v
	}
	if t, ok := out["type"]; !ok || t != "object" {
		// A schema that is not about an object cannot describe named
		// arguments; accept any object rather than drop the tool.
		if ok {
			out = map[string]any{}
		}
		out["type"] = "object"
	}
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return json.RawMessage(`{"properties":{},"type":"object"}`)
	}
	return raw
}

// Name is mcp__<server>__<tool>.
func (t *Tool) Name() string { return t.name }

// Description is the server's description of the tool (its title when the
// description is empty).
func (t *Tool) Description() string { return t.description }

// Schema is the tool's input schema, patched to be an object schema.
func (t *Tool) Schema() json.RawMessage { return t.schema }

// ReadOnly reports the server's readOnlyHint; false when it gave none.
func (t *Tool) ReadOnly() bool { return t.readOnly }

// Destructive reports the server's destructiveHint for approval previews:
// true when a writer gives no hint (MCP's default), always false for a
// read-only tool.
func (t *Tool) Destructive() bool { return t.destructive }

// Server is the name of the server the tool belongs to.
func (t *Tool) Server() string { return t.srv.cfg.Name }

// RemoteName is the tool's name on its server.
func (t *Tool) RemoteName() string { return t.remote }

// Execute calls the tool. Text content is returned concatenated, other
// content is summarised in brackets; a result flagged isError comes back as
// an error carrying the server's text so the model sees that the call
// failed. A dead connection, a timeout or cancellation is an error too.
func (t *Tool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	args, err := objectArgs(args)
	if err != nil {
		return "", fmt.Errorf("mcp: %s: %w", t.name, err)
	}
	var onProgress func(*sdk.ProgressNotificationParams)
	if t.progress != nil {
		call, ok := agent.ToolCallFromContext(ctx)
		if !ok {
			call = agent.ToolCall{Name: t.name}
		}
		onProgress = func(p *sdk.ProgressNotificationParams) {
			c := call
			t.progress(ctx, agent.Event{Type: agent.EventToolProgress, Call: &c, Text: progressText(p)})
		}
	}
	res, err := t.srv.call(ctx, t.remote, args, onProgress)
	if err != nil {
		return "", err
	}
	text := resultText(res)
	if res.IsError {
		if text == "" {
			text = "the tool reported an error without details"
		}
		return "", &ToolError{Tool: t.name, Text: text}
	}
	return text, nil
}

// ToolError is a result the server flagged with isError. Its Error is the
// server's text, meant for the model.
type ToolError struct {
	Tool string
	Text string
}

func (e *ToolError) Error() string { return e.Tool + " failed: " + e.Text }

// objectArgs checks that args is a JSON object; empty args mean {}.
func objectArgs(args json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, errors.New("arguments must be a JSON object")
	}
	return trimmed, nil
}

func progressText(p *sdk.ProgressNotificationParams) string {
	var b strings.Builder
	if p.Total > 0 {
		fmt.Fprintf(&b, "%g/%g", p.Progress, p.Total)
	} else {
		fmt.Fprintf(&b, "%g", p.Progress)
	}
	if p.Message != "" {
		b.WriteString(" ")
		b.WriteString(p.Message)
	}
	return b.String()
}

// resultText flattens a tool result for the model.
func resultText(res *sdk.CallToolResult) string {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link %s %s]", c.URI, c.Name))
		case *sdk.EmbeddedResource:
			parts = append(parts, embeddedText(c.Resource))
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			return string(raw)
		}
	}
	return strings.Join(parts, "\n")
}

func embeddedText(r *sdk.ResourceContents) string {
	switch {
	case r == nil:
		return "[empty embedded resource]"
	case r.Text != "":
		return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
	default:
		return fmt.Sprintf("[resource %s %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))
	}
}
