package mcp

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressFn receives one progress notification of a call.
type progressFn = func(*sdk.ProgressNotificationParams)

// deliverProgress hands a progress notification to the call that owns its
// token; notifications for finished or unknown calls are dropped.
func (c *conn) deliverProgress(p *sdk.ProgressNotificationParams) {
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	if f, ok := c.progress.Load(token); ok {
		f.(progressFn)(p)
	}
}

// progressTransport delivers progress notifications as they are read.
//
// The SDK dispatches notifications on a goroutine apart from responses, so a
// server that reports progress and then answers at once could have its
// progress arrive after the call returned, that is, never. Reading them off
// the stream in order fixes that. Only connections without private SDK hooks
// (stdio, sse) can be wrapped; streamable HTTP relies on the SDK handler.
type progressTransport struct {
	inner sdk.Transport
	c     *conn
}

func (t *progressTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &progressConn{Connection: conn, c: t.c}, nil
}

type progressConn struct {
	sdk.Connection
	c *conn
}

const methodProgress = "notifications/progress"

func (p *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := p.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.IsCall() || req.Method != methodProgress {
			return msg, nil
		}
		var params sdk.ProgressNotificationParams
		if json.Unmarshal(req.Params, &params) == nil {
			p.c.deliverProgress(&params)
		}
	}
}
