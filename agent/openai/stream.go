package openai

import (
	"context"
	"io"
	"net/http"

	"reasonix/agent"
	"reasonix/agent/httpstream"
)

// Stream sends req and streams the answer. It fails only when req cannot be
// encoded; everything else arrives on the channel, which carries text as it
// is generated, then the complete tool calls in index order, then one usage
// chunk, then exactly one ChunkDone or ChunkError, and is then closed. An
// answer without text or tool calls ends in a ChunkError of class
// agent.ErrEmptyAnswer, and one past the output bounds (MaxOutputBytes,
// MaxStreamBytes) in agent.ErrOutputTooLarge; reading stops there.
//
// Transient failures (connection errors, 408, 409, 5xx, 429 with a
// Retry-After of at most two minutes, a stream cut or garbled before any of
// it was passed on, one silent wait for response headers and one empty
// answer) are retried with jittered backoff before anything was sent on the
// channel. Failures after the response started are not retried: part of the
// answer may already have been passed on.
//
// The consumer must read until the channel is closed or cancel ctx. When
// ctx ends, the request is abandoned and the channel is closed, with a final
// ChunkError carrying ctx's error if the channel has room for it.
func (p *Provider) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	body, err := p.encodeRequest(req)
	if err != nil {
		return nil, err
	}
	return p.client.Stream(ctx, httpstream.Request{
		Body:    body,
		Header:  p.header,
		Failure: failureClass,
		Decode:  p.decode,
	}), nil
}

// header authenticates with a bearer token, as OpenAI-compatible servers expect.
func (p *Provider) header(h http.Header) {
	if p.client.Key != "" {
		h.Set("Authorization", "Bearer "+p.client.Key)
	}
}

// decode reads one response body with a fresh decoder.
func (p *Provider) decode(body io.Reader, emit func(agent.Chunk) bool, readErr func(error) *agent.ProviderError) (agent.Chunk, bool) {
	d := decoder{p: p, readErr: readErr}
	return d.decode(body, emit)
}
