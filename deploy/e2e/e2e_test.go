// Package e2e runs the deployment artefacts for real: the image of
// deploy/docker and the stack of deploy/compose. scripts/deploy-e2e.sh
// (`make deploy-test`) builds the images and runs these tests; without
// REASONIX_DEPLOY_IMAGE they skip, so `go test ./...` stays fast.
//
// Every container uses the host's network: the daemon runs with
// --bridge=none, and traffic stays on loopback.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/internal/eventually"
)

// images returns the Reasonix image under test and the Postgres image the
// compose stack uses, or skips.
func images(t *testing.T) (reasonix, postgres string) {
	t.Helper()
	reasonix = os.Getenv("REASONIX_DEPLOY_IMAGE")
	if reasonix == "" {
		t.Skip("REASONIX_DEPLOY_IMAGE is not set: `make deploy-test` builds the image and runs these tests")
	}
	return reasonix, os.Getenv("REASONIX_DEPLOY_POSTGRES_IMAGE")
}

// run runs a command and returns its combined output, failing the test
// when it fails.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// freePort returns a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// status GETs url and returns the status code, 0 when nothing answered.
func status(url string) int {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// waitReady polls base/readyz until it answers 200 and returns how long
// that took from start (when the answer was seen: up to eventually's longest
// poll interval, 20 ms, late).
func waitReady(t *testing.T, base string, start time.Time, logs func() string) time.Duration {
	t.Helper()
	var took time.Duration
	defer func() {
		if took == 0 { // eventually failed the test: show why
			t.Logf("%s never became ready\n%s", base, logs())
		}
	}()
	eventually.True(t, 60*time.Second, func() bool {
		if status(base+"/readyz") == 200 {
			took = time.Since(start)
		}
		return took != 0
	}, "%s/readyz never answered 200", base)
	return took
}

// api is a client of one node's HTTP API.
type api struct {
	t     *testing.T
	base  string
	token string
}

func (a api) call(method, path string, body, out any) int {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			a.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
	}
	return resp.StatusCode
}

type task struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Result *struct {
		FinalAnswer string `json:"final_answer"`
		Error       string `json:"error"`
	} `json:"result"`
}

func (a api) submit(prompt string) string {
	a.t.Helper()
	var out struct{ ID string }
	if code := a.call("POST", "/api/v1/tasks", map[string]any{"prompt": prompt, "posture": "auto"}, &out); code != 202 || out.ID == "" {
		a.t.Fatalf("submit to %s: %d %+v", a.base, code, out)
	}
	return out.ID
}

// finish waits until the task ends and returns it.
func (a api) finish(id string, logs func() string) task {
	a.t.Helper()
	var got task
	eventually.NoError(a.t, 90*time.Second, func() error {
		got = task{}
		a.call("GET", "/api/v1/tasks/"+id, nil, &got)
		if slices.Contains([]string{"queued", "running", ""}, got.State) {
			return fmt.Errorf("task %s is %q\n%s", id, got.State, logs())
		}
		return nil
	})
	return got
}

// median of durations (sorts them).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}
