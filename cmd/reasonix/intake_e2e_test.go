package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// peakRSS is the most resident memory process pid has had (VmHWM), in bytes.
func peakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM: %q", rest)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// TestServeBoundsUnauthenticatedIntake: 40 concurrent 25 MiB POSTs with a
// well-formed but wrong signature to a GitHub webhook of the built binary
// leave its peak RSS under 150 MB; each is answered 401, 413 or 429 (with
// Retry-After); while they arrive, properly signed small deliveries are
// still verified and /healthz answers, and after them a signed delivery
// starts a task.
func TestServeBoundsUnauthenticatedIntake(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the service's peak RSS from /proc")
	}
	const (
		secret  = "burst-webhook-secret"
		senders = 40
		size    = 25 << 20 // GitHub's largest payload, which the endpoint must accept
		bound   = 150 << 20
	)
	e := newE2E(t, answer("looked at it"))
	e.configure(hookConfig)
	s := e.serve(t, "CI_HOOK_SECRET="+secret)
	pid := s.cmd.Process.Pid
	idle := peakRSS(t, pid)

	// Keep-alive connections, as senders use: the service answers a
	// refusal before the upload ends, then stops reading and closes the
	// connection a moment later, time for the sender to read the answer.
	// (A request marked Connection: close has its connection reset at
	// once by net/http, answer unread: a sender that wants the answer
	// does not send that.)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{}}
	garbage := bytes.Repeat([]byte("x"), size)
	type answerOf struct {
		status     int
		retryAfter string
		err        error
	}
	answers := make([]answerOf, senders)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", s.url+"/hooks/ci", bytes.NewReader(garbage))
			req.Header.Set("X-GitHub-Event", "check_run")
			req.Header.Set("X-GitHub-Delivery", fmt.Sprint("burst-", i))
			req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(randomBytes(32)))
			res, err := client.Do(req)
			if err != nil {
				answers[i].err = err
				return
			}
			res.Body.Close()
			answers[i] = answerOf{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After")}
		})
	}
	burstDone := make(chan struct{})
	go func() { wg.Wait(); close(burstDone) }()

	signed := func(delivery, conclusion string) int {
		body := fmt.Appendf(nil, `{"action":"completed","check_run":{"conclusion":%q,"head_branch":"main","id":%q}}`, conclusion, delivery)
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		req, _ := http.NewRequest("POST", s.url+"/hooks/ci", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "check_run")
		req.Header.Set("X-GitHub-Delivery", delivery)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("signed delivery %s: %v", delivery, err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	// While the burst lasts: signed deliveries the filter drops (verified,
	// parsed, answered 204 without starting a task), and the health check.
	during := 0
	for open := true; open; {
		select {
		case <-burstDone:
			open = false
			continue
		default:
		}
		if code := signed(fmt.Sprint("during-", during), "success"); code != http.StatusNoContent {
			t.Fatalf("signed delivery %d during the burst: %d", during, code)
		}
		res, err := client.Get(s.url + "/healthz")
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("healthz during the burst: %v %v", res, err)
		}
		res.Body.Close()
		during++
	}
	peak := peakRSS(t, pid)

	counts := map[int]int{}
	for i, a := range answers {
		switch {
		case a.err != nil:
			t.Errorf("sender %d got no answer: %v", i, a.err)
		case a.status == http.StatusTooManyRequests && a.retryAfter == "":
			t.Errorf("sender %d: 429 without Retry-After", i)
		case a.status != http.StatusUnauthorized && a.status != http.StatusRequestEntityTooLarge && a.status != http.StatusTooManyRequests:
			t.Errorf("sender %d: %d", i, a.status)
		}
		counts[a.status]++
	}
	if code := signed("after", "failure"); code != http.StatusAccepted {
		t.Fatalf("signed delivery after the burst: %d\n%s", code, s.stderr.String())
	}
	t.Logf("peak RSS %d MiB (idle %d MiB); answers %v; %d signed deliveries during the burst", peak>>20, idle>>20, counts, during)
	if peak >= bound {
		t.Fatalf("peak RSS %d MiB, want under %d MiB", peak>>20, bound>>20)
	}
	if during == 0 {
		t.Fatal("no signed delivery was sent while the burst lasted")
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// TestServeIntakeBudgetIsConfigured: [serve] intake_inflight_bytes is the
// budget: a signed GitHub delivery larger than it is 413 naming it, unread,
// though GitHub's own limit is 25 MiB; a smaller one is taken.
func TestServeIntakeBudgetIsConfigured(t *testing.T) {
	const secret = "budget-webhook-secret"
	e := newE2E(t)
	e.configure(hookConfig + "\n[serve]\nintake_inflight_bytes = 2097152\n")
	s := e.serve(t, "CI_HOOK_SECRET="+secret)
	post := func(pad int) (int, string) {
		body := fmt.Appendf(nil, `{"action":"completed","check_run":{"conclusion":"success"},"pad":%q}`, strings.Repeat("x", pad))
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		req, _ := http.NewRequest("POST", s.url+"/hooks/ci", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "check_run")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprint("pad-", pad))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		msg, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(msg)
	}
	if code, msg := post(3 << 20); code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "exceeds 2097152 bytes") {
		t.Fatalf("3 MiB on a 2 MiB budget: %d %s", code, msg)
	}
	if code, msg := post(1 << 20); code != http.StatusNoContent {
		t.Fatalf("1 MiB on a 2 MiB budget: %d %s", code, msg)
	}
}
