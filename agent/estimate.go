package agent

// Token estimates for deciding when to compact. They must be cheap (they
// run before every request when the provider reports no usage) and err on
// the high side: three bytes a token overcounts English and code a little
// and is about right for CJK text, whose characters take three bytes.

// messageOverhead is what a message costs beyond its text (role, framing).
const messageOverhead = 4

func estimateText(s string) int { return (len(s) + 2) / 3 }

// estimateMessage estimates one message as a model would count it.
func estimateMessage(m *Message) int {
	n := messageOverhead + estimateText(m.Content)
	for i := range m.ToolCalls {
		c := &m.ToolCalls[i]
		n += messageOverhead + estimateText(c.Name) + estimateText(c.Arguments)
	}
	n += len(m.Images) * imageTokens
	// Opaque provider state (encrypted reasoning) is sent back as it is.
	return n + len(m.ProviderState)/4
}

func estimateMessages(msgs []Message) int {
	n := 0
	for i := range msgs {
		n += estimateMessage(&msgs[i])
	}
	return n
}

// tokenBytes is how many bytes of text the estimate counts as n tokens.
func tokenBytes(n int) int { return max(n, 0) * 3 }
