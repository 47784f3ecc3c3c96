package openai

import "reasonix/agent"

// tooLarge is the failure of an answer past its bounds.
func (p *Provider) tooLarge(msg string) *agent.ProviderError {
	return &agent.ProviderError{Class: agent.ErrOutputTooLarge, Message: p.safeMessage(msg)}
}
