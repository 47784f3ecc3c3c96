package openai

import (
	"errors"
	"io"

	"reasonix/agent"
)

// errStreamTooLarge is what boundedReader returns once the response body
// passed its bound; the decoder turns it into agent.ErrOutputTooLarge.
var errStreamTooLarge = errors.New("openai: response body too large")

// boundedReader stops reading a response body after max bytes. A runaway or
// hostile server may stream without end; the bytes that are read are
// decoded and dropped, but framing, keep-alive comments and usage reports
// would otherwise keep the connection (and the worker) forever. The caller
// closes the body, which drops the connection instead of draining it.
type boundedReader struct {
	r    io.Reader
	left int
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errStreamTooLarge
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= n
	return n, err
}

// tooLarge is the failure of an answer past its bounds.
func (p *Provider) tooLarge(msg string) *agent.ProviderError {
	return &agent.ProviderError{Class: agent.ErrOutputTooLarge, Message: p.safeMessage(msg)}
}
