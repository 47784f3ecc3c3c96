package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"reasonix/internal/secretenv"
	"reasonix/runner/store"
)

// apiClient talks to a running `reasonix serve` for the admin commands.
type apiClient struct {
	base  string
	token string
	http  *http.Client
}

// clientFlags are the flags every API client command takes.
type clientFlags struct {
	config string
	server string
}

// clientAction registers the flags every API client command takes (the
// command's own come from its builder) and finds the service before run.
func clientAction(fs *flag.FlagSet, run func(c *apiClient, args []string, stdout, stderr io.Writer) error) action {
	var f clientFlags
	f.register(fs)
	return func(args []string, stdout, stderr io.Writer) error {
		c, err := f.newClient()
		if err != nil {
			return err
		}
		return run(c, args, stdout, stderr)
	}
}

func (f *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "configuration `file` (for the default server address and data dir)")
	fs.StringVar(&f.server, "server", "", "the service's base `URL` (default http://[serve] addr)")
}

// newClient finds the server and the token: REASONIX_API_TOKEN, else the
// variable [serve] api_token_env names, else <data dir>/api-token.
func (f *clientFlags) newClient() (*apiClient, error) {
	cfg, err := loadServiceConfig(f.config)
	if err != nil {
		return nil, err
	}
	base := f.server
	if base == "" {
		base = "http://" + cfg.Serve.Addr
	}
	if _, err := url.Parse(base); err != nil || !strings.HasPrefix(base, "http") {
		return nil, usageErrorf("--server %q is not an http(s) URL", base)
	}
	token := strings.TrimSpace(secretenv.Getenv("REASONIX_API_TOKEN"))
	if token == "" && cfg.Serve.APITokenEnv != "" {
		token = strings.TrimSpace(secretenv.Getenv(cfg.Serve.APITokenEnv))
	}
	if token == "" {
		data, err := os.ReadFile(filepath.Join(cfg.DataDir(), tokenFile))
		if err != nil {
			return nil, &configError{fmt.Errorf("no API token: set REASONIX_API_TOKEN or run this on the service's machine (%s is missing)", filepath.Join(cfg.DataDir(), tokenFile))}
		}
		token = strings.TrimSpace(string(data))
	}
	return &apiClient{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// apiError is the service's error body.
type apiError struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
	Ref     string `json:"ref"`
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("the service answered %d %s: %s", e.Status, e.Code, e.Message)
	if e.Ref != "" {
		msg += " (reference " + e.Ref + ")"
	}
	return msg
}

// do sends a request with body encoded as JSON (when non-nil) and decodes
// the answer into out.
func (c *apiClient) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the service at %s (is `reasonix serve` running?): %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		e := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil || e.Code == "" {
			e.Code, e.Message = http.StatusText(resp.StatusCode), strings.TrimSpace(string(data))
		}
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// notFound says which thing was not found when the service answered 404,
// instead of the service's internal wording.
func notFound(err error, what, id string) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return fmt.Errorf("%s %s not found", what, id)
	}
	return err
}

// task is the service's view of a task, as much as the CLI shows.
type task struct {
	ID        string    `json:"id"`
	Source    string    `json:"source"`
	Requester string    `json:"requester"`
	Prompt    string    `json:"prompt"`
	Goal      bool      `json:"goal"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	Result    *struct {
		Summary     string `json:"summary"`
		FinalAnswer string `json:"final_answer"`
		DiffStat    string `json:"diff_stat"`
		Branch      string `json:"branch"`
		Tokens      struct {
			Prompt     int `json:"prompt"`
			Completion int `json:"completion"`
		} `json:"tokens"`
		Cost           float64                    `json:"cost"`
		UnpricedTokens int                        `json:"unpriced_tokens"`
		Models         map[string]store.ModelCost `json:"models"`
		DurationMS     int64                      `json:"duration_ms"`
		Error          string                     `json:"error"`
		Reason         string                     `json:"reason"`
	} `json:"result"`
}

type approval struct {
	ID        string    `json:"id"`
	TaskID    string    `json:"task_id"`
	Tool      string    `json:"tool"`
	Subject   string    `json:"subject"`
	Preview   string    `json:"preview"`
	Requester string    `json:"requester"`
	Scopes    []string  `json:"scopes"`
	State     string    `json:"state"`
	Decision  string    `json:"decision"`
	DecidedBy string    `json:"decided_by"`
	ExpiresAt time.Time `json:"expires_at"`
}

// exitError ends a command with a given exit code after its output.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// watchExit follows a task to its end and turns its final state into the
// exit code reasonix run would give.
func watchExit(c *apiClient, id string, stdout io.Writer) error {
	ctx, stop := signalContext()
	defer stop()
	v := newWatchView(stdout)
	t, err := c.watch(ctx, id, v)
	v.close()
	if err != nil {
		return err
	}
	printTask(stdout, t)
	if code := taskExit(t.State); code != exitOK {
		return &exitError{code: code, msg: fmt.Sprintf("task %s ended %s", t.ID, t.State)}
	}
	return nil
}
