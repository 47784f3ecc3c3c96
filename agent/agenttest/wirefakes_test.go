package agenttest

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/internal/sse"
)

// postAs sends body to url with the headers of a client of the wire.
func postAs(t *testing.T, url, body string, header map[string]string) *http.Response {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// typedEvent is a named SSE event with the type its JSON data declares.
type typedEvent struct {
	name string
	typ  string
	data map[string]any
}

// readTyped reads a whole stream of named events whose data are JSON
// objects with a "type" field.
func readTyped(t *testing.T, body io.Reader) []typedEvent {
	t.Helper()
	var out []typedEvent
	rd := sse.NewReader(body, 0)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(ev.Data), &data); err != nil {
			t.Fatalf("fake sent invalid JSON %q: %v", ev.Data, err)
		}
		typ, _ := data["type"].(string)
		if ev.Type != typ {
			t.Errorf("event named %q carries type %q", ev.Type, typ)
		}
		out = append(out, typedEvent{ev.Type, typ, data})
	}
}

func names(evs []typedEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.name)
	}
	return out
}

// num reads a number at a path of nested objects.
func num(v any, path ...string) int {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	f, _ := v.(float64)
	return int(f)
}

func str(v any, path ...string) string {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

const anthropicBody = `{"model":"claude-x","max_tokens":64,"stream":true,
	"system":[{"type":"text","text":"Be terse.","cache_control":{"type":"ephemeral"}}],
	"messages":[
		{"role":"user","content":"list files"},
		{"role":"assistant","content":[{"type":"text","text":"Listing."},{"type":"tool_use","id":"toolu_1","name":"ls","input":{ "path" : "." }}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.go"}]},{"type":"text","text":"and hurry"}]}],
	"tools":[{"name":"ls","description":"List.","input_schema":{"type":"object"}}]}`

func TestAnthropicFakeSpeaksTheMessagesStream(t *testing.T) {
	calls := []agent.ToolCall{
		{ID: "toolu_a", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "toolu_b", Name: "grep", Arguments: `{"pattern":"x"}`},
	}
	s := NewServerFor(t, "anthropic", Turn{Text: "hello there", ToolCalls: calls, Usage: agent.Usage{Prompt: 100, Completion: 9, Cached: 60}})
	resp := postAs(t, s.URL+"/v1/messages", anthropicBody, map[string]string{"X-Api-Key": "sk-ant-k", "Anthropic-Version": "2023-06-01"})
	evs := readTyped(t, resp.Body)
	n := names(evs)
	if n[0] != "message_start" || !slices.Equal(n[len(n)-2:], []string{"message_delta", "message_stop"}) {
		t.Fatalf("event order %v", n)
	}
	var text string
	inputs := map[int]string{}
	tools := map[int][2]string{}
	for _, e := range evs {
		switch e.typ {
		case "content_block_start":
			if str(e.data, "content_block", "type") == "tool_use" {
				tools[num(e.data, "index")] = [2]string{str(e.data, "content_block", "id"), str(e.data, "content_block", "name")}
			}
		case "content_block_delta":
			text += str(e.data, "delta", "text")
			inputs[num(e.data, "index")] += str(e.data, "delta", "partial_json")
		}
	}
	if text != "hello there" {
		t.Errorf("text = %q", text)
	}
	for i, c := range calls {
		idx := i + 1 // block 0 is the text
		if tools[idx] != [2]string{c.ID, c.Name} || inputs[idx] != c.Arguments {
			t.Errorf("block %d: tool %v input %q, want %+v", idx, tools[idx], inputs[idx], c)
		}
	}
	start, delta := evs[0].data, evs[len(evs)-2].data
	if num(start, "message", "usage", "input_tokens") != 40 || num(start, "message", "usage", "cache_read_input_tokens") != 60 ||
		num(delta, "usage", "output_tokens") != 9 || str(delta, "delta", "stop_reason") != "tool_use" {
		t.Errorf("usage or stop reason: start %v delta %v", start, delta)
	}

	r := s.Requests()[0]
	want := []agent.Message{
		{Role: agent.RoleSystem, Content: "Be terse."},
		{Role: agent.RoleUser, Content: "list files"},
		{Role: agent.RoleAssistant, Content: "Listing.", ToolCalls: []agent.ToolCall{{ID: "toolu_1", Name: "ls", Arguments: `{"path":"."}`}}},
		{Role: agent.RoleTool, ToolCallID: "toolu_1", Content: "a.go"},
		{Role: agent.RoleUser, Content: "and hurry"},
	}
	if r.APIKey != "sk-ant-k" || r.Model != "claude-x" || r.MaxTokens != 64 || !r.Stream || !sameMessages(r.Messages, want) {
		t.Errorf("recorded %+v\nwant messages %+v", r, want)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "ls" || string(r.Tools[0].Parameters) != `{"type":"object"}` {
		t.Errorf("tools %+v", r.Tools)
	}
}

func sameMessages(a, b []agent.Message) bool {
	return slices.EqualFunc(a, b, func(x, y agent.Message) bool {
		return x.Role == y.Role && x.Content == y.Content && x.ToolCallID == y.ToolCallID && slices.Equal(x.ToolCalls, y.ToolCalls)
	})
}

func TestAnthropicFakeRequiresTheVersionHeader(t *testing.T) {
	s := NewServerFor(t, "anthropic", Turn{Text: "unused"})
	resp := postAs(t, s.URL+"/v1/messages", anthropicBody, map[string]string{"X-Api-Key": "k"})
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(raw), "anthropic-version") || s.Remaining() != 1 {
		t.Fatalf("status %d body %s, %d steps left", resp.StatusCode, raw, s.Remaining())
	}
}

func TestAnthropicFakeFaults(t *testing.T) {
	call := agent.ToolCall{ID: "toolu_c", Name: "write_file", Arguments: `{"path":"x","content":"y"}`}
	s := NewServerFor(t, "anthropic",
		Fail(429, "slow down", 3*time.Second),
		Fail(529, "Overloaded", 0),
		ContextTooLong(),
		StreamFail("part", "Overloaded"),
		CutToolCall("writing", call),
		Garbled("so far"),
	)
	url, hdr := s.URL+"/v1/messages", map[string]string{"X-Api-Key": "k", "Anthropic-Version": "2023-06-01"}
	for _, want := range []struct {
		status int
		typ    string
		msg    string
	}{{429, "rate_limit_error", "slow down"}, {529, "overloaded_error", "Overloaded"}, {400, "invalid_request_error", "prompt is too long"}} {
		resp := postAs(t, url, anthropicBody, hdr)
		var body struct {
			Type  string         `json:"type"`
			Error anthropicError `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != want.status || body.Type != "error" || body.Error.Type != want.typ || !strings.Contains(body.Error.Message, want.msg) {
			t.Errorf("status %d body %+v, want %+v", resp.StatusCode, body, want)
		}
		if want.status == 429 && resp.Header.Get("Retry-After") != "3" {
			t.Errorf("retry-after = %q", resp.Header.Get("Retry-After"))
		}
	}
	evs := readTyped(t, postAs(t, url, anthropicBody, hdr).Body)
	if last := evs[len(evs)-1]; last.typ != "error" || str(last.data, "error", "type") != "overloaded_error" {
		t.Errorf("stream failure ends with %+v", last)
	}
	// A cut stream stops inside the tool block: no stop, no message end.
	cut := postAs(t, url, anthropicBody, hdr)
	raw, err := io.ReadAll(cut.Body)
	if err == nil || strings.Contains(string(raw), "content_block_stop\ndata: {\"index\":1") || strings.Contains(string(raw), "message_stop") ||
		!strings.Contains(string(raw), "input_json_delta") {
		t.Errorf("cut stream (read error %v):\n%s", err, raw)
	}
	raw, _ = io.ReadAll(postAs(t, url, anthropicBody, hdr).Body)
	if !strings.HasSuffix(string(raw), "data: {\"garbled\": \n\n") || strings.Contains(string(raw), "message_stop") {
		t.Errorf("garbled stream:\n%s", raw)
	}
}

const responsesBody = `{"model":"gpt-x","instructions":"Be terse.","stream":true,"store":false,"max_output_tokens":32,
	"input":[
		{"type":"message","role":"user","content":"list files"},
		{"type":"reasoning","id":"rs_1","encrypted_content":"opaque"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Listing."}]},
		{"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"},
		{"type":"function_call","call_id":"call_2","name":"pwd","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_1","output":"a.go"},
		{"type":"function_call_output","call_id":"call_2","output":"/w"},
		{"role":"user","content":[{"type":"input_text","text":"and hurry"}]}],
	"tools":[{"type":"function","name":"ls","description":"List.","parameters":{"type":"object"},"strict":false}]}`

func TestResponsesFakeSpeaksTheResponsesStream(t *testing.T) {
	calls := []agent.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "call_b", Name: "grep", Arguments: `{"pattern":"x"}`},
	}
	s := NewServerFor(t, "responses", Turn{Text: "hello there", ToolCalls: calls, Usage: agent.Usage{Prompt: 100, Completion: 9, Cached: 60}})
	resp := postAs(t, s.URL+"/responses", responsesBody, map[string]string{"Authorization": "Bearer sk-k"})
	evs := readTyped(t, resp.Body)
	n := names(evs)
	if n[0] != "response.created" || n[len(n)-1] != "response.completed" {
		t.Fatalf("event order %v", n)
	}
	var text string
	args := map[string]string{}
	done := map[string]string{}
	items := map[string][2]string{}
	for i, e := range evs {
		if num(e.data, "sequence_number") != i {
			t.Errorf("event %d has sequence number %d", i, num(e.data, "sequence_number"))
		}
		switch e.typ {
		case "response.output_text.delta":
			text += str(e.data, "delta")
		case "response.function_call_arguments.delta":
			args[str(e.data, "item_id")] += str(e.data, "delta")
		case "response.output_item.done":
			if str(e.data, "item", "type") == "function_call" {
				id := str(e.data, "item", "id")
				items[id] = [2]string{str(e.data, "item", "call_id"), str(e.data, "item", "name")}
				done[id] = str(e.data, "item", "arguments")
			}
		}
	}
	if text != "hello there" || len(items) != len(calls) {
		t.Fatalf("text %q, %d function call items", text, len(items))
	}
	for id, item := range items {
		i := slices.IndexFunc(calls, func(c agent.ToolCall) bool { return c.ID == item[0] })
		if i < 0 || calls[i].Name != item[1] || args[id] != calls[i].Arguments || done[id] != calls[i].Arguments {
			t.Errorf("item %s: %v args %q / %q", id, item, args[id], done[id])
		}
	}
	final := evs[len(evs)-1].data
	if num(final, "response", "usage", "input_tokens") != 100 || num(final, "response", "usage", "input_tokens_details", "cached_tokens") != 60 ||
		num(final, "response", "usage", "output_tokens") != 9 || str(final, "response", "status") != "completed" {
		t.Errorf("final event %v", final)
	}

	r := s.Requests()[0]
	want := []agent.Message{
		{Role: agent.RoleSystem, Content: "Be terse."},
		{Role: agent.RoleUser, Content: "list files"},
		{Role: agent.RoleAssistant, Content: "Listing.", ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "ls", Arguments: "{}"}, {ID: "call_2", Name: "pwd", Arguments: "{}"}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: "a.go"},
		{Role: agent.RoleTool, ToolCallID: "call_2", Content: "/w"},
		{Role: agent.RoleUser, Content: "and hurry"},
	}
	if r.APIKey != "sk-k" || r.Model != "gpt-x" || r.MaxTokens != 32 || !r.Stream || !sameMessages(r.Messages, want) {
		t.Errorf("recorded %+v\nwant messages %+v", r, want)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "ls" {
		t.Errorf("tools %+v", r.Tools)
	}
}

// TestResponsesFakeStreamsReasoning: a turn's Thinking is a reasoning
// item whose summary streams when the request asked for one, and whose
// reasoning text streams otherwise; the finished item carries the opaque
// state either way.
func TestResponsesFakeStreamsReasoning(t *testing.T) {
	for _, tc := range []struct {
		reasoning, delta string
	}{
		{`"reasoning":{"effort":"low","summary":"auto"},`, "response.reasoning_summary_text.delta"},
		{"", "response.reasoning_text.delta"},
	} {
		s := NewServerFor(t, "responses", Turn{Thinking: "weighing it", Text: "ok"})
		body := strings.Replace(responsesBody, `"stream":true,`, `"stream":true,`+tc.reasoning, 1)
		evs := readTyped(t, postAs(t, s.URL+"/responses", body, map[string]string{"Authorization": "Bearer sk-k"}).Body)
		var thought string
		state := false
		for _, e := range evs {
			switch {
			case strings.HasPrefix(e.typ, "response.reasoning_") && strings.HasSuffix(e.typ, ".delta"):
				if e.typ != tc.delta {
					t.Errorf("%s in a stream that should carry %s", e.typ, tc.delta)
				}
				thought += str(e.data, "delta")
			case e.typ == "response.output_item.done" && str(e.data, "item", "type") == "reasoning":
				state = str(e.data, "item", "encrypted_content") != ""
			}
		}
		if thought != "weighing it" || !state {
			t.Errorf("reasoning %q (state %v) in %v", thought, state, names(evs))
		}
		if want := map[bool]string{true: "auto", false: ""}[tc.reasoning != ""]; s.Requests()[0].ReasoningSummary != want {
			t.Errorf("recorded summary %q, want %q", s.Requests()[0].ReasoningSummary, want)
		}
	}
}

func TestResponsesFakeFaults(t *testing.T) {
	s := NewServerFor(t, "responses",
		Fail(429, "slow down", 2*time.Second),
		ContextTooLong(),
		StreamFail("part", "boom"),
		Turn{Text: "cut short", FinishReason: "length"},
	)
	url, hdr := s.URL+"/responses", map[string]string{"Authorization": "Bearer k"}
	for _, want := range []struct {
		status int
		code   string
	}{{429, ""}, {400, "context_length_exceeded"}} {
		resp := postAs(t, url, responsesBody, hdr)
		var body errorBody
		json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != want.status || body.Error.Code != want.code || body.Error.Message == "" {
			t.Errorf("status %d body %+v, want %+v", resp.StatusCode, body, want)
		}
	}
	evs := readTyped(t, postAs(t, url, responsesBody, hdr).Body)
	if last := evs[len(evs)-1]; last.typ != "response.failed" || str(last.data, "response", "error", "code") != "server_error" ||
		str(last.data, "response", "error", "message") != "boom" {
		t.Errorf("stream failure ends with %+v", last)
	}
	evs = readTyped(t, postAs(t, url, responsesBody, hdr).Body)
	if last := evs[len(evs)-1]; last.typ != "response.incomplete" || str(last.data, "response", "incomplete_details", "reason") != "max_output_tokens" {
		t.Errorf("a turn cut by length ends with %+v", last)
	}
}

func TestUnknownWireKindIsRefused(t *testing.T) {
	if _, err := StartServerFor("gemini", nil); err == nil || !strings.Contains(err.Error(), "anthropic") {
		t.Fatalf("err = %v, want one naming the known kinds", err)
	}
	if got := Kinds(); !slices.Equal(got, []string{"anthropic", "openai", "responses"}) {
		t.Fatalf("Kinds() = %v", got)
	}
}
