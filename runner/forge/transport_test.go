package forge_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
)

// A forge answering with a redirect to another host must not make the
// client carry the token there: GitLab's header is not one net/http
// strips on its own.
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			var reached atomic.Int32
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached.Add(1)
			}))
			t.Cleanup(other.Close)
			// 127.0.0.1 and localhost are different hosts to the client.
			target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target+"/user", http.StatusFound)
			}))
			t.Cleanup(srv.Close)
			f := open(t, forge.Config{Kind: kind, APIURL: apiRoot(kind, srv.URL), Project: "acme/app", Token: "tok-0123456789"})
			if _, err := f.Verify(t.Context()); err == nil || !strings.Contains(err.Error(), "redirect") {
				t.Fatalf("Verify through a cross-host redirect: %v, want a refusal", err)
			}
			if reached.Load() != 0 {
				t.Errorf("the other host was reached")
			}
		})
	}
}

// A next-page link pointing away from the API root is not followed.
func TestPageLinkLeavingTheAPIRootIsRefused(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<`+strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+`/steal?page=2>; rel="next"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(srv.Close)
	f := open(t, forge.Config{Kind: forge.GitHub, APIURL: srv.URL + "/api/v3", Project: "acme/app", Token: "tok-0123456789"})
	if _, _, err := f.FindPR(t.Context(), "b"); err == nil || !strings.Contains(err.Error(), "API root") {
		t.Fatalf("FindPR with a foreign next link: %v, want a refusal", err)
	}
	if reached.Load() != 0 {
		t.Errorf("the other host was reached")
	}
}

// An oversized answer is an error, not an unbounded read.
func TestOversizedAnswerIsRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"login":"`))
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range 9 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		_, _ = w.Write([]byte(`"}`))
	}))
	t.Cleanup(srv.Close)
	f := open(t, forge.Config{Kind: forge.GitHub, APIURL: srv.URL, Project: "acme/app", Token: "tok-0123456789"})
	_, err := f.Verify(t.Context())
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Verify of a 9 MB answer: %v, want a size error", err)
	}
	var ae *forge.APIError
	if errors.As(err, &ae) {
		t.Errorf("a size error is not an API error: %v", err)
	}
}

// Each forge gets its token in its own header and nowhere else.
func TestTokenHeader(t *testing.T) {
	for kind, header := range map[forge.Kind][2]string{
		forge.GitHub: {"Authorization", "Bearer tok-0123456789"},
		forge.GitLab: {"Private-Token", "tok-0123456789"},
	} {
		t.Run(string(kind), func(t *testing.T) {
			var got http.Header
			var uri string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, uri = r.Header.Clone(), r.RequestURI
				w.WriteHeader(http.StatusUnauthorized)
			}))
			t.Cleanup(srv.Close)
			f := open(t, forge.Config{Kind: kind, APIURL: apiRoot(kind, srv.URL), Project: "acme/app", Token: "tok-0123456789"})
			_, _ = f.Verify(t.Context())
			if got.Get(header[0]) != header[1] {
				t.Errorf("%s = %q, want %q", header[0], got.Get(header[0]), header[1])
			}
			n := 0
			for _, vs := range got {
				for _, v := range vs {
					if strings.Contains(v, "tok-0123456789") {
						n++
					}
				}
			}
			if n != 1 || strings.Contains(uri, "tok-") {
				t.Errorf("the token appears in %d headers (want 1) or the URL %q", n, uri)
			}
		})
	}
}

// A forge that never answers is left when the caller's deadline passes.
func TestDeadlineEndsAHangingCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	f := open(t, forge.Config{Kind: forge.GitLab, APIURL: srv.URL + "/api/v4", Project: "acme/app", Token: "tok-0123456789"})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := f.Verify(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Verify against a silent forge: %v, want DeadlineExceeded", err)
	}
}

// One Forge serves concurrent callers (run with -race).
func TestConcurrentCalls(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		h.srv.SetChecks("abc", forgetest.Check{Name: "build", State: forge.CISuccess})
		errs := make(chan error, 8)
		for i := range 8 {
			go func() {
				if i%2 == 0 {
					_, err := h.f.Checks(t.Context(), "abc")
					errs <- err
					return
				}
				_, err := h.f.Verify(t.Context())
				errs <- err
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})
}

// apiRoot is the API root of kind on a test server at base.
func apiRoot(kind forge.Kind, base string) string {
	if kind == forge.GitLab {
		return base + "/api/v4"
	}
	return base + "/api/v3"
}
