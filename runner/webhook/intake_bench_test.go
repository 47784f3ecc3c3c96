package webhook_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// payload64K is a GitHub-like check_run payload of about 64 KiB: nested
// objects and many short strings, as real ones are, not one long string.
func payload64K(conclusion string) []byte {
	var commits []map[string]any
	for i := 0; ; i++ {
		commits = append(commits, map[string]any{"id": fmt.Sprintf("%040x", i), "message": strings.Repeat("fix the flaky test ", 3),
			"author": map[string]any{"name": "Dev Eloper", "email": "dev@example.com"}, "added": []string{"a.go"}, "distinct": true})
		b, _ := json.Marshal(map[string]any{"action": "completed", "commits": commits,
			"check_run": map[string]any{"conclusion": conclusion, "head_branch": "main", "output": map[string]any{"summary": "tests failed"}}})
		if len(b) >= 64<<10 {
			return b
		}
	}
}

// BenchmarkSignedDelivery is one signed 64 KiB GitHub delivery through the
// mounted handler, in process: its signature verified, its body parsed,
// filtered out (204) and the delivery recorded in the store.
func BenchmarkSignedDelivery(b *testing.B) {
	f := start(b, nil, nil, ciHook())
	api := f.srv.Config.Handler
	body := payload64K("success")
	h := githubHeaders("check_run", "bench-1", body, ghSecret)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/hooks/ci", bytes.NewReader(body))
		r.Header = h
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code != http.StatusNoContent {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
