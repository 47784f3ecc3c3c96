package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"reasonix/internal/intakebudget"
)

// BenchmarkBodyPath compares, in one run, the two ways of taking a signed
// 64 KiB GitHub body: "buffered" reads it whole and then computes its
// HMAC (the handler before the intake budget), "streamed" reserves it from
// the budget and computes the HMAC as it is read (the handler now).
func BenchmarkBodyPath(b *testing.B) {
	body := bytes.Repeat([]byte(`{"k":"v"},`), 64<<10/10)
	secrets := [][]byte{[]byte("bench-secret")}
	m := hmac.New(sha256.New, secrets[0])
	m.Write(body)
	h := http.Header{}
	h.Set(headerGitHubSignature, "sha256="+hex.EncodeToString(m.Sum(nil)))
	request := func() *http.Request {
		r := httptest.NewRequest("POST", "/hooks/ci", bytes.NewReader(body))
		r.Header = h
		return r
	}
	b.Run("buffered", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			r := request()
			got, err := io.ReadAll(io.LimitReader(r.Body, MaxGitHubBody+1))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := verifyGitHub(r.Header, got, secrets); err != nil {
				b.Fatal(err)
			}
		}
	})
	budget := intakebudget.New(0)
	b.Run("streamed", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			r := request()
			check, err := newGitHubCheck(r.Header, secrets)
			if err != nil {
				b.Fatal(err)
			}
			got, err := budget.Read(r, MaxGitHubBody, check)
			if err != nil {
				b.Fatal(err)
			}
			if err := check.verify(); err != nil {
				b.Fatal(err)
			}
			got.Release()
		}
	})
}
