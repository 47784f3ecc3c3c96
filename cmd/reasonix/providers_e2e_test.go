package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// wireServer is a fake model endpoint for the kinds agenttest does not
// speak: it answers each POST with the next scripted event stream, as the
// vendor writes it, and records the requests.
type wireServer struct {
	*httptest.Server
	mu      sync.Mutex
	streams []string
	bodies  []string
	headers []http.Header
	// When each request arrived and its answer was written, for the
	// per-step overhead benchmark.
	received, responded []time.Time
}

func newWireServer(t testing.TB, streams ...string) *wireServer {
	w := &wireServer{streams: streams}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		body, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.received = append(w.received, arrived)
		w.bodies = append(w.bodies, string(body))
		w.headers = append(w.headers, r.Header.Clone())
		if len(w.streams) == 0 {
			w.mu.Unlock()
			http.Error(rw, `{"error":{"message":"script exhausted"}}`, http.StatusInternalServerError)
			return
		}
		next := w.streams[0]
		w.streams = w.streams[1:]
		w.mu.Unlock()
		rw.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(rw, next)
		rw.(http.Flusher).Flush()
		w.mu.Lock()
		w.responded = append(w.responded, time.Now())
		w.mu.Unlock()
	}))
	t.Cleanup(w.Close)
	return w
}

// events renders (type, data) pairs as an event stream.
func events(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", pairs[i], pairs[i+1])
	}
	return b.String()
}

// runWithProvider runs the binary against srv configured as one provider of kind.
func runWithProvider(t *testing.T, kind string, srv *wireServer, task string) (string, string, int, *e2e) {
	t.Helper()
	e := &e2e{t: t, home: t.TempDir(), work: t.TempDir()}
	e.writeUserConfig(fmt.Sprintf(`
default_model = "vendor"

[[providers]]
name = "vendor"
kind = %q
base_url = %q
model = "vendor-model"
api_key_env = "FAKE_API_KEY"
max_retries = 1
`, kind, srv.URL))
	stdout, stderr, code := e.run("run", "--auto", task)
	return stdout, stderr, code, e
}

func TestRunOverAnthropicMessages(t *testing.T) {
	srv := newWireServer(t,
		events(
			"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":30,"cache_read_input_tokens":70,"output_tokens":1}}}`,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"write_file","input":{}}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"hello.txt\","}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"content\":\"hi from claude\\n\"}"}}`,
			"content_block_stop", `{"type":"content_block_stop","index":0}`,
			"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}`,
			"message_stop", `{"type":"message_stop"}`),
		events(
			"message_start", `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}`,
			"ping", `{"type":"ping"}`,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Wrote hello.txt."}}`,
			"content_block_stop", `{"type":"content_block_stop","index":0}`,
			"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
			"message_stop", `{"type":"message_stop"}`),
	)
	stdout, stderr, code, e := runWithProvider(t, "anthropic", srv, "write hello.txt")
	if code != exitOK || !strings.Contains(stdout, "Wrote hello.txt.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(e.work, "hello.txt")); string(data) != "hi from claude\n" {
		t.Fatalf("hello.txt = %q", data)
	}
	if len(srv.bodies) != 2 || srv.headers[0].Get("X-Api-Key") != "sk-secret-test-key" || srv.headers[0].Get("Anthropic-Version") == "" {
		t.Fatalf("%d requests, headers %v", len(srv.bodies), srv.headers)
	}
	second := srv.bodies[1]
	for _, want := range []string{`"type":"tool_use","id":"toolu_1"`, `"type":"tool_result","tool_use_id":"toolu_1"`, `"cache_control":{"type":"ephemeral"}`, `"system":[`} {
		if !strings.Contains(second, want) {
			t.Errorf("second request lacks %s:\n%s", want, second)
		}
	}
}

func TestRunOverResponsesCarriesReasoning(t *testing.T) {
	srv := newWireServer(t,
		events(
			"response.created", `{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`,
			"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAA-opaque-reasoning"}}`,
			"response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"call_1","name":"write_file"}}`,
			"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"path\":\"hello.txt\","}`,
			"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"\"content\":\"hi from gpt\\n\"}"}`,
			"response.completed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":0},"output_tokens":40}}}`),
		events(
			"response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_2","output_index":0,"delta":"Wrote hello.txt."}`,
			"response.completed", `{"type":"response.completed","response":{"id":"resp_2","status":"completed","usage":{"input_tokens":160,"input_tokens_details":{"cached_tokens":128},"output_tokens":5}}}`),
	)
	stdout, stderr, code, e := runWithProvider(t, "responses", srv, "write hello.txt")
	if code != exitOK || !strings.Contains(stdout, "Wrote hello.txt.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(e.work, "hello.txt")); string(data) != "hi from gpt\n" {
		t.Fatalf("hello.txt = %q", data)
	}
	if len(srv.bodies) != 2 || srv.headers[0].Get("Authorization") != "Bearer sk-secret-test-key" {
		t.Fatalf("%d requests, headers %v", len(srv.bodies), srv.headers)
	}
	second := srv.bodies[1]
	reasoning := strings.Index(second, `"encrypted_content":"gAAAA-opaque-reasoning"`)
	call := strings.Index(second, `"type":"function_call","call_id":"call_1"`)
	output := strings.Index(second, `"type":"function_call_output","call_id":"call_1"`)
	if reasoning < 0 || call < reasoning || output < call || !strings.Contains(second, `"instructions":`) {
		t.Fatalf("second request does not replay reasoning, call, output in order:\n%s", second)
	}
}
