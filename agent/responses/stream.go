package responses

import (
	"context"
	"io"
	"net/http"
	"strings"

	"reasonix/agent"
	"reasonix/agent/httpstream"
)

// Stream sends req and streams the answer. It fails only when req cannot be
// encoded; everything else arrives on the channel: text as it is generated,
// then the complete function calls in output order, then one usage chunk, then
// exactly one ChunkDone or ChunkError; then the channel is closed. An
// answer whose text and function calls pass MaxOutputBytes, or whose body passes
// MaxStreamBytes, ends in agent.ErrOutputTooLarge; reading stops there.
//
// Transient failures (connection errors, 408, 409, 5xx, 429 with a
// Retry-After of at most two minutes, a server error or cut stream, one
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
		Revise: func(pe *agent.ProviderError) ([]byte, bool) {
			switch {
			case refusesReasoningSummary(pe):
				// An organisation not verified for summaries, or a model
				// without them: ask again without, and never again here.
				if p.noSummary.Swap(true) {
					return nil, false
				}
			case refusesEncryptedReasoning(pe):
				// Models without reasoning refuse the include; ask again
				// without it, and from now on never send it to this endpoint.
				if p.plainReasoning.Swap(true) {
					return nil, false
				}
			default:
				return nil, false
			}
			plain, err := p.encodeRequest(req)
			return plain, err == nil
		},
	}), nil
}

// header authenticates with a bearer token.
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

// refusesReasoningSummary recognises a rejection of reasoning.summary:
// OpenAI's "Your organization must be verified to generate reasoning
// summaries", or a parameter the model does not take.
func refusesReasoningSummary(pe *agent.ProviderError) bool {
	return pe.Class == agent.ErrRejected && pe.Status == http.StatusBadRequest &&
		strings.Contains(strings.ToLower(pe.Message), "summar")
}

// refusesEncryptedReasoning recognises the rejection a model without
// reasoning gives to include=["reasoning.encrypted_content"].
func refusesEncryptedReasoning(pe *agent.ProviderError) bool {
	return pe.Class == agent.ErrRejected && pe.Status == http.StatusBadRequest &&
		strings.Contains(strings.ToLower(pe.Message), "encrypted content")
}
