package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPExamplePlugin runs the example plugin as a streamable HTTP server.
func TestHTTPExamplePlugin(t *testing.T) {
	cmd := exec.Command(pluginBin, "-http", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))

	m, _ := startManager(t, Config{Servers: []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: url}}})
	st := m.Status()[0]
	if st.State != StateReady || st.Tools != 2 || st.SessionID == "" || st.PID != 0 {
		t.Fatalf("status = %+v, want ready with 2 tools and a session id", st)
	}
	out, err := toolByName(t, m, "mcp__remote__wordcount").Execute(context.Background(), json.RawMessage(`{"text":"a b c"}`))
	if err != nil || out != "words=3 lines=1 chars=5" {
		t.Fatalf("wordcount over http = %q, %v", out, err)
	}
}

// inProcessServer is an SDK server with one tool, echo, that also reports
// progress when asked to.
func inProcessServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "inproc", Version: "v0"}, nil)
	type args struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, in args) (*sdk.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "echoing"})
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

// recorder keeps the headers of every request a handler saw.
type recorder struct {
	mu       sync.Mutex
	requests []http.Header
	sessions []string // Mcp-Session-Id values the server issued
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.Header.Clone())
		r.mu.Unlock()
		h.ServeHTTP(&sessionSpy{ResponseWriter: w, r: r}, req)
	})
}

type sessionSpy struct {
	http.ResponseWriter
	r       *recorder
	noticed bool
}

func (s *sessionSpy) notice() {
	if s.noticed {
		return
	}
	s.noticed = true
	if id := s.Header().Get("Mcp-Session-Id"); id != "" {
		s.r.mu.Lock()
		s.r.sessions = append(s.r.sessions, id)
		s.r.mu.Unlock()
	}
}

func (s *sessionSpy) WriteHeader(code int) {
	s.notice()
	s.ResponseWriter.WriteHeader(code)
}

func (s *sessionSpy) Write(p []byte) (int, error) {
	s.notice()
	return s.ResponseWriter.Write(p)
}

func (s *sessionSpy) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func TestHTTPSendsHeadersAndEchoesSessionID(t *testing.T) {
	srv := inProcessServer()
	rec := &recorder{}
	ts := httptest.NewServer(rec.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	t.Cleanup(ts.Close)

	m, _ := startManager(t, Config{Servers: []ServerConfig{{
		Name: "h", Type: TypeHTTP, URL: ts.URL,
		Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Team": "${REASONIX_WORKSPACE_ROOT}"},
	}}, WorkspaceRoot: "/ws"})
	var progress []string
	var mu sync.Mutex
	var echo *Tool
	for _, tl := range m.Tools(func(_ context.Context, ev agentEvent) { mu.Lock(); progress = append(progress, ev.Text); mu.Unlock() }) {
		echo = tl
	}
	out, err := echo.Execute(context.Background(), json.RawMessage(`{"text":"over http"}`))
	if err != nil || out != "over http" {
		t.Fatalf("echo = %q, %v", out, err)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.sessions) == 0 {
		t.Fatal("the server issued no session id")
	}
	sid := rec.sessions[0]
	if len(rec.requests) < 3 {
		t.Fatalf("only %d requests seen", len(rec.requests))
	}
	for i, h := range rec.requests {
		if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Team") != "/ws" {
			t.Errorf("request %d headers = %v, want the static headers (workspace expanded)", i, h)
		}
		if i > 0 && h.Get("Mcp-Session-Id") != sid {
			t.Errorf("request %d Mcp-Session-Id = %q, want %q", i, h.Get("Mcp-Session-Id"), sid)
		}
	}
}

func TestSSE(t *testing.T) {
	srv := inProcessServer()
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)

	m, _ := startManager(t, Config{Servers: []ServerConfig{{Name: "legacy", Type: TypeSSE, URL: ts.URL}}})
	if st := m.Status()[0]; st.State != StateReady || st.Tools != 1 {
		t.Fatalf("status = %+v", st)
	}
	var progress []string
	var echo *Tool
	for _, tl := range m.Tools(func(_ context.Context, ev agentEvent) { progress = append(progress, ev.Text) }) {
		echo = tl
	}
	out, err := echo.Execute(context.Background(), json.RawMessage(`{"text":"over sse"}`))
	if err != nil || out != "over sse" {
		t.Fatalf("echo = %q, %v", out, err)
	}
	// sse connections deliver progress in order, before the answer.
	if len(progress) != 1 || progress[0] != "1 echoing" {
		t.Fatalf("progress = %q, want [\"1 echoing\"]", progress)
	}
	// Stopping ends the long-lived event stream (goleak checks the rest).
	if err := m.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSSECrossOriginEndpointRefused(t *testing.T) {
	var hits sync.Map // header values the other origin saw
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store("auth", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(other.Close)
	announcing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/messages?sessionid=1\n\n", other.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(announcing.Close)

	m, _ := startManager(t, Config{Servers: []ServerConfig{{
		Name: "evil", Type: TypeSSE, URL: announcing.URL,
		Headers:        map[string]string{"Authorization": "Bearer s3cret"},
		StartupTimeout: 5e9,
	}}})
	st := m.Status()[0]
	if st.State != StateFailed || st.Err == nil || !strings.Contains(st.Err.Error(), ErrCrossOrigin.Error()) {
		t.Fatalf("status = %+v, want failed with the cross-origin refusal", st)
	}
	if strings.Contains(st.Err.Error(), "s3cret") {
		t.Fatalf("the error leaks the header: %v", st.Err)
	}
	if v, ok := hits.Load("auth"); ok {
		t.Fatalf("the other origin was contacted (Authorization %q)", v)
	}
}

func TestOriginGuard(t *testing.T) {
	for _, tc := range []struct {
		configured, request string
		same                bool
	}{
		{"https://a.example/mcp", "https://a.example/other?x=1", true},
		{"https://a.example/mcp", "https://A.EXAMPLE:443/mcp", true},
		{"http://a.example/mcp", "http://a.example:80/mcp", true},
		{"https://a.example/mcp", "http://a.example/mcp", false},
		{"https://a.example/mcp", "https://a.example:8443/mcp", false},
		{"https://a.example/mcp", "https://b.example/mcp", false},
		{"https://a.example/mcp", "https://a.example.evil/mcp", false},
	} {
		a, b := mustURL(t, tc.configured), mustURL(t, tc.request)
		if got := sameOrigin(b, a); got != tc.same {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tc.request, tc.configured, got, tc.same)
		}
	}

	var seen http.Header
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.Header.Clone()
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	g := &originGuard{base: base, origin: mustURL(t, "https://a.example/mcp"), headers: map[string]string{"Authorization": "Bearer x"}}
	req, _ := http.NewRequest("GET", "https://b.example/redirected", nil)
	if _, err := g.RoundTrip(req); err != nil || seen.Get("Authorization") != "" {
		t.Fatalf("lenient guard: err %v, Authorization %q sent to another origin", err, seen.Get("Authorization"))
	}
	g.strict = true
	if _, err := g.RoundTrip(req); !errors.Is(err, ErrCrossOrigin) {
		t.Fatalf("strict guard = %v, want ErrCrossOrigin", err)
	}
	req, _ = http.NewRequest("POST", "https://a.example/mcp", nil)
	if _, err := g.RoundTrip(req); err != nil || seen.Get("Authorization") != "Bearer x" {
		t.Fatalf("same origin: err %v, Authorization %q", err, seen.Get("Authorization"))
	}
	if req.Header.Get("Authorization") != "" {
		t.Fatal("the guard modified the caller's request")
	}
}
