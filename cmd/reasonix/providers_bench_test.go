package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"

	"reasonix/agent/agenttest"
)

// BenchmarkRunThirtyStepsByWire runs the 30-step task of
// BenchmarkRunThirtySteps once per provider kind, each against a fake
// endpoint speaking that kind's wire with zero think time, and reports the
// median harness overhead per step: the time the model server sits idle
// between finishing one answer and receiving the next request.
func BenchmarkRunThirtyStepsByWire(b *testing.B) {
	for _, kind := range []string{"openai", "anthropic", "responses"} {
		b.Run(kind, func(b *testing.B) {
			var overheads []float64
			for b.Loop() {
				overheads = append(overheads, thirtyStepOverhead(b, kind))
			}
			b.ReportMetric(median(overheads), "ms-overhead/step")
		})
	}
}

// thirtyStepOverhead runs the task once and returns the median gap in ms.
func thirtyStepOverhead(b *testing.B, kind string) float64 {
	script := thirtyStepScript()
	var gaps []float64
	if kind == "openai" {
		e := newE2E(b, script...)
		runBench(b, e)
		reqs := e.srv.Requests()
		for i := 1; i < len(reqs); i++ {
			gaps = append(gaps, float64(reqs[i].Received.Sub(reqs[i-1].Responded).Microseconds())/1000)
		}
		return median(gaps)
	}
	streams := make([]string, len(script))
	for i, turn := range script {
		streams[i] = renderTurn(kind, i, turn)
	}
	srv := newWireServer(b, streams...)
	e := &e2e{t: b, home: b.TempDir(), work: b.TempDir()}
	e.writeUserConfig(fmt.Sprintf("[[providers]]\nname = \"vendor\"\nkind = %q\nbase_url = %q\nmodel = \"m\"\napi_key_env = \"FAKE_API_KEY\"\n", kind, srv.URL))
	runBench(b, e)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.received) != len(script) {
		b.Fatalf("%s: %d requests, want %d", kind, len(srv.received), len(script))
	}
	for i := 1; i < len(srv.received); i++ {
		gaps = append(gaps, float64(srv.received[i].Sub(srv.responded[i-1]).Microseconds())/1000)
	}
	return median(gaps)
}

func runBench(b *testing.B, e *e2e) {
	cmd := exec.Command(binary, "run", "--auto", "--max-steps", "40", "benchmark task")
	cmd.Dir = e.work
	cmd.Env = baseEnv(e.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("run failed: %v\n%s", err, out)
	}
}

// renderTurn writes one scripted turn as the vendor streams it.
func renderTurn(kind string, n int, turn agenttest.Turn) string {
	q := func(s string) string { out, _ := json.Marshal(s); return string(out) }
	var ev []string
	if kind == "anthropic" {
		ev = append(ev, "message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_%d","type":"message","role":"assistant","content":[],"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`, n, turn.Usage.Prompt-turn.Usage.Cached, turn.Usage.Cached))
		idx := 0
		if turn.Text != "" {
			ev = append(ev, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+q(turn.Text)+`}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`)
			idx++
		}
		for _, c := range turn.ToolCalls {
			half := len(c.Arguments) / 2
			ev = append(ev, "content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, idx, q(c.ID), q(c.Name)),
				"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, idx, q(c.Arguments[:half])),
				"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, idx, q(c.Arguments[half:])),
				"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, idx))
			idx++
		}
		stop := "end_turn"
		if len(turn.ToolCalls) > 0 {
			stop = "tool_use"
		}
		ev = append(ev, "message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q},"usage":{"output_tokens":%d}}`, stop, turn.Usage.Completion),
			"message_stop", `{"type":"message_stop"}`)
		return events(ev...)
	}
	ev = append(ev, "response.created", fmt.Sprintf(`{"type":"response.created","response":{"id":"resp_%d","status":"in_progress","output":[]}}`, n))
	out := 0
	if turn.Text != "" {
		ev = append(ev, "response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","item_id":"msg_%d","output_index":0,"delta":%s}`, n, q(turn.Text)))
		out++
	}
	for _, c := range turn.ToolCalls {
		half := len(c.Arguments) / 2
		item := fmt.Sprintf(`"id":"fc_%d_%d","type":"function_call","call_id":%s,"name":%s`, n, out, q(c.ID), q(c.Name))
		ev = append(ev, "response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":%d,"item":{%s,"arguments":""}}`, out, item),
			"response.function_call_arguments.delta", fmt.Sprintf(`{"type":"response.function_call_arguments.delta","item_id":"fc_%d_%d","output_index":%d,"delta":%s}`, n, out, out, q(c.Arguments[:half])),
			"response.function_call_arguments.delta", fmt.Sprintf(`{"type":"response.function_call_arguments.delta","item_id":"fc_%d_%d","output_index":%d,"delta":%s}`, n, out, out, q(c.Arguments[half:])),
			"response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":%d,"item":{%s,"arguments":%s}}`, out, item, q(c.Arguments)))
		out++
	}
	ev = append(ev, "response.completed", fmt.Sprintf(`{"type":"response.completed","response":{"id":"resp_%d","status":"completed","usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d}}}`,
		n, turn.Usage.Prompt, turn.Usage.Cached, turn.Usage.Completion))
	return events(ev...)
}
