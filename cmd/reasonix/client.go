package main

import (
	"context"
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
	"reasonix/runner/client"
)

// clientFlags are the flags every API client command takes.
type clientFlags struct {
	config string
	server string
}

// clientAction registers the flags every API client command takes (the
// command's own come from its builder) and finds the service before run.
// Every call goes through runner/client, the typed client a Go program
// would use.
func clientAction(fs *flag.FlagSet, run func(c *client.Client, args []string, stdout, stderr io.Writer) error) action {
	var f clientFlags
	f.register(fs)
	return func(args []string, stdout, stderr io.Writer) error {
		c, err := f.newClient()
		if err != nil {
			return err
		}
		return unreachable(c, run(c, args, stdout, stderr))
	}
}

func (f *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "configuration `file` (for the default server address and data dir)")
	fs.StringVar(&f.server, "server", "", "the service's base `URL` (default http://[serve] addr)")
}

// newClient finds the server and the token: REASONIX_API_TOKEN, else the
// variable [serve] api_token_env names, else <data dir>/api-token.
func (f *clientFlags) newClient() (*client.Client, error) {
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
	c, err := client.New(base, token, client.WithTimeout(30*time.Second))
	if err != nil {
		return nil, usageErrorf("--server %q is not an http(s) URL", base)
	}
	return c, nil
}

// unreachable says what to check when the service could not be reached
// at all, instead of only net/http's words.
func unreachable(c *client.Client, err error) error {
	var ue *url.Error
	var refused *client.Error
	if errors.As(err, &ue) && !errors.As(err, &refused) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("cannot reach the service at %s (is `reasonix serve` running?): %w", c.BaseURL(), ue)
	}
	return err
}

// notFound says which thing was not found when the service answered 404,
// instead of the service's internal wording.
func notFound(err error, what, id string) error {
	var e *client.Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		return fmt.Errorf("%s %s not found", what, id)
	}
	return err
}

// exitError ends a command with a given exit code after its output.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// watchExit follows a task to its end and turns its final state into the
// exit code reasonix run would give.
func watchExit(c *client.Client, id string, stdout io.Writer) error {
	ctx, stop := signalContext()
	defer stop()
	v := newWatchView(stdout)
	t, err := watchTask(ctx, c, id, v)
	v.close()
	if err != nil {
		return err
	}
	printTask(stdout, t, taskInstructions(c, t))
	if code := taskExit(t.State); code != exitOK {
		return &exitError{code: code, msg: fmt.Sprintf("task %s ended %s", t.ID, t.State)}
	}
	return nil
}
