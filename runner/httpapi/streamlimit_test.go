package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/internal/eventually"
)

// TestStreamsPerTokenCapped: a token holds at most 64 event streams; the
// 65th is refused with 429, Retry-After and a JSON error, and a stream that
// ends frees its slot.
func TestStreamsPerTokenCapped(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		agenttest.Turn{Text: "done"})
	e := newEnv(t, p)
	var c created
	e.do("POST", "/api/v1/tasks", `{"prompt":"stream me"}`, nil, &c)
	e.waitTask(c.ID, "waiting_approval") // the stream stays open while the task waits

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	open := func() (*http.Response, context.CancelFunc) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/api/v1/tasks/"+c.ID+"/events/stream", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		return res, cancel
	}
	var cancels []context.CancelFunc
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	for i := range 64 {
		res, cancel := open()
		cancels = append(cancels, cancel)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("stream %d = %d, want 200", i+1, res.StatusCode)
		}
	}

	res, cancel := open()
	cancels = append(cancels, cancel)
	if res.StatusCode == http.StatusOK {
		t.Fatal("stream 65 = 200, want 429: streams per token are not capped")
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var er struct{ Code, Message string }
	_ = json.Unmarshal(body, &er)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || er.Code != "too_many_streams" || er.Message == "" {
		t.Fatalf("stream 65 = %d Retry-After %q %s, want 429 with Retry-After and code too_many_streams",
			res.StatusCode, res.Header.Get("Retry-After"), body)
	}

	// Closing one stream lets a new one in (once the server noticed).
	cancels[0]()
	eventually.NoError(t, 10*time.Second, func() error {
		res, cancel := open()
		cancels = append(cancels, cancel)
		if res.StatusCode == http.StatusOK {
			return nil
		}
		res.Body.Close()
		return fmt.Errorf("after closing a stream a new one still gets %d", res.StatusCode)
	})
}
