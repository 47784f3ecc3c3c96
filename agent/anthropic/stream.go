package anthropic

import (
	"context"
	"io"
	"net/http"

	"reasonix/agent"
	"reasonix/agent/httpstream"
)

// Stream sends req and streams the answer. It fails only when req cannot be
// encoded; everything else arrives on the channel: text as it is generated,
// then the complete tool calls in block order, then one usage chunk, then
// exactly one ChunkDone or ChunkError; then the channel is closed. An
// answer whose text and tool calls pass MaxOutputBytes, or whose body passes
// MaxStreamBytes, ends in agent.ErrOutputTooLarge; reading stops there.
//
// Transient failures (connection errors, 408, 409, 5xx and 529, 429 with a
// retry-after of at most two minutes, an overloaded or cut stream, one
// silent wait for headers) are retried with jittered backoff while nothing
// has been passed on; after that a failure ends the stream, since part of
// the answer is already out.
//
// The consumer must read until the channel is closed or cancel ctx.
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

// header sets the API version and authenticates with x-api-key.
func (p *Provider) header(h http.Header) {
	h.Set("Anthropic-Version", apiVersion)
	if p.client.Key != "" {
		h.Set("X-Api-Key", p.client.Key)
	}
}

// decode reads one response body with a fresh decoder.
func (p *Provider) decode(body io.Reader, emit func(agent.Chunk) bool, readErr func(error) *agent.ProviderError) (agent.Chunk, bool) {
	d := decoder{p: p, readErr: readErr}
	return d.decode(body, emit)
}
