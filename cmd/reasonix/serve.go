package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"reasonix/config"
	"reasonix/internal/intakebudget"
	"reasonix/internal/redact"
	"reasonix/internal/secretenv"
	"reasonix/runner"
	"reasonix/runner/dashboard"
	"reasonix/runner/httpapi"
	"reasonix/runner/session"
	"reasonix/runner/store"
	"reasonix/runner/webhook"
	"reasonix/runner/workspace"
)

// handOverBudget is how long a stopping node has, after the drain, to cut
// the steps still running and hand their tasks over (checkpoint the
// workspace, queue the task again). A SIGTERM therefore takes at most
// [serve] drain_timeout plus this; supervisors must wait longer (see
// docs/SPEC.md, "Nodes").
const handOverBudget = 8 * time.Second

// tokenFile holds the generated API token inside the data dir.
const tokenFile = "api-token"

// serveFlags registers serve's flags; the action runs the service.
func serveFlags(fs *flag.FlagSet) action {
	file := configFileFlag(fs)
	addr := fs.String("addr", "", "listen `address` (default $REASONIX_ADDR, else [serve] addr, 127.0.0.1:8080)")
	var logs logFormat
	fs.Var(&logs, "log-format", "log `format`: json or text (default text on a terminal, else json)")
	return func(_ []string, stdout, stderr io.Writer) error {
		return serveCommand(*file, *addr, logs, stdout, stderr)
	}
}

// serveCommand is `reasonix serve`: the durable service with its HTTP API.
func serveCommand(file, addr string, logs logFormat, stdout, stderr io.Writer) error {
	cfg, err := loadCheckedServiceConfig(file)
	if err != nil {
		return err
	}
	listen := cmpString(addr, cfg.Serve.Addr)

	dataDir := cfg.DataDir()
	if dataDir == "" {
		return &configError{errors.New("no data directory: set [store] path or REASONIX_HOME")}
	}
	// The data dir holds the token, the database and every transcript:
	// private to its owner, also when it existed before.
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return fmt.Errorf("securing the data directory: %w", err)
	}
	release, err := lockDataDir(dataDir)
	if err != nil {
		return err
	}
	defer release()
	token, tokenSource, err := apiToken(cfg, dataDir)
	if err != nil {
		return err
	}
	// A webhook without its secret, or with a template that does not
	// parse, would answer every delivery 401 or 422: refuse to start.
	hooks, err := webhook.Compile(cfg.Webhooks, secretenv.Lookup)
	if err != nil {
		return &configError{err}
	}
	chat, err := readChatTokens(cfg)
	if err != nil {
		return err
	}
	extraSecrets := append(append([]string{token}, hooks.Secrets()...), chat.secrets()...)
	secrets := redact.New(append(session.Secrets(cfg), extraSecrets...)...)
	log := slog.New(logs.handler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: secrets.ReplaceAttr}))
	warnMissingModel(cfg, log)
	kind, sandboxWarning, err := session.SandboxStatus(cfg)
	if err != nil {
		return &configError{err}
	} else if sandboxWarning != "" {
		log.Warn(sandboxWarning)
	} else {
		log.Info("bash is sandboxed", "sandbox", kind)
	}

	ctx := context.Background()
	// The queue's own start-up chatter (migrations applied, client started)
	// only matters when something goes wrong.
	st, err := openStore(ctx, cfg, slog.New(logs.handler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer st.Close()
	svcCfg, err := serviceConfig(cfg, dataDir, log)
	if err != nil {
		return err
	}
	if err := registerAPIToken(ctx, st, svcCfg.Node, token, tokenSource, log); err != nil {
		return err
	}
	svcCfg.Store = st
	svcCfg.Secrets = extraSecrets
	svcCfg.Addr = listen
	svc, err := runner.New(svcCfg)
	if err != nil {
		return err
	}
	// One budget for every body read before its sender is authenticated.
	intake := intakebudget.New(int64(cfg.Serve.IntakeInflightBytes))
	hookHandler, err := webhook.NewHandler(webhook.Config{Hooks: hooks, Service: svc, Store: st, Logger: log, Budget: intake})
	if err != nil {
		return err
	}
	dash, err := dashboard.New(dashboard.Config{Service: svc, Store: st, Logger: log, Webhooks: hookHandler,
		SecureCookies: behindTLS(cfg.Serve)})
	if err != nil {
		return err
	}
	api, err := httpapi.New(httpapi.Config{Service: svc, Logger: log, Webhooks: hookHandler,
		MaxStreamsPerToken: cfg.Serve.MaxStreamsPerToken, Dashboard: dash})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return &configError{fmt.Errorf("cannot listen on %s: %w (set --addr or [serve] addr)", listen, err)}
	}
	if err := svc.Start(ctx); err != nil {
		ln.Close()
		return err
	}
	relay, chatRoutes, chats, err := chatRelay(cfg, chat, svc, st, intake, log)
	if err == nil && relay != nil {
		err = relay.Start(ctx)
	}
	if err != nil {
		ln.Close()
		svc.Stop(ctx)
		return fmt.Errorf("starting the chat relay: %w", err)
	}
	srv := httpapi.NewServer(listen, withChatRoutes(api, chatRoutes))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("reasonix serving", "url", "http://"+ln.Addr().String(), "node", svc.Node(), "store", st.Driver(), "data", dataDir, "token", tokenSource)
	startupOf(ctx, cfg, svc, "http://"+ln.Addr().String(), string(st.Driver()), dataDir, tokenSource, sandboxWarning, chats).write(stdout)
	notifyManager(log, "READY=1\nSTATUS=serving on http://"+ln.Addr().String())

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var serveErr error
	select {
	case s := <-sigs:
		log.Info("stopping", "signal", s.String())
		notifyManager(log, "STOPPING=1")
	case serveErr = <-served:
		log.Error("the HTTP server stopped", "err", serveErr)
	}
	go func() { // a second signal: stop waiting
		<-sigs
		log.Warn("second signal: exiting now")
		os.Exit(exitInterrupted)
	}()
	if relay != nil { // chat intake stops with the HTTP intake
		stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := relay.Stop(stopCtx); err != nil {
			log.Warn("stopping the chat relay", "err", err)
		}
		cancel()
	}
	return shutdown(srv, svc, log, serveErr, cfg.Serve.DrainTimeout+handOverBudget)
}

// shutdown stops intake at once (the listener closes, /readyz fails), lets
// the service drain and hand its running tasks over within budget, then
// cuts what is still open.
func shutdown(srv *http.Server, svc *runner.Service, log *slog.Logger, cause error, budget time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	httpDone := make(chan struct{})
	go func() {
		defer close(httpDone)
		short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
		defer cancelShort()
		if err := srv.Shutdown(short); err != nil {
			srv.Close() // event streams stay open until cut
		}
	}()
	err := svc.Stop(ctx)
	<-httpDone
	if err != nil {
		log.Error("stopping the service", "err", err)
		return err
	}
	log.Info("stopped")
	if cause != nil && !errors.Is(cause, http.ErrServerClosed) {
		return cause
	}
	return nil
}

// serviceConfig assembles the runner's configuration from the service config.
func serviceConfig(cfg *config.Config, dataDir string, log *slog.Logger) (runner.Config, error) {
	node, err := runner.NodeID(dataDir)
	if err != nil {
		return runner.Config{}, err
	}
	c := runnerSettings(cfg)
	c.Providers = func(ref string) (session.Model, error) {
		return session.ResolveModel(cfg, ref)
	}
	c.Node, c.Logger = node, log
	if len(cfg.Workspaces) > 0 {
		m, err := workspace.New(workspace.Config{
			Root:   filepath.Join(dataDir, "workspaces"),
			Keep:   cfg.Runner.KeepWorkspaces,
			Env:    session.SetupEnv(cfg),
			Logger: log,
		})
		if err != nil {
			return runner.Config{}, &configError{fmt.Errorf("[[workspaces]]: %w", err)}
		}
		c.Workspaces = runner.NewWorkspaces(m)
	}
	return c, nil
}

// warnMissingModel says at start what a fresh installation still needs, so
// `reasonix serve` runs with no configuration at all and is honest about it.
func warnMissingModel(cfg *config.Config, log *slog.Logger) {
	ref, err := cfg.ResolveModel("")
	switch {
	case err != nil:
		log.Warn("no model is configured: tasks will fail until you add a [[providers]] entry (see reasonix.example.toml)",
			"user_config", filepath.Join(cmpString(cfg.Home(), "~/.reasonix"), config.UserFile))
	case ref.APIKeyEnv != "" && secretenv.Getenv(ref.APIKeyEnv) == "":
		log.Warn("the model's API key is not set: tasks will fail until it is", "provider", ref.Name, "variable", ref.APIKeyEnv)
	}
}

// registerAPIToken makes the service's own token an admin principal, so an
// installation from before tokens were principals keeps working. On SQLite
// it is "admin"; nodes sharing Postgres each have their own token file, so
// each registers "admin@<node>".
func registerAPIToken(ctx context.Context, st *store.Store, node, secret, source string, log *slog.Logger) error {
	name := store.BootstrapName
	if st.Driver() == store.DriverPostgres {
		name += "@" + node
	}
	t, err := st.RegisterBootstrapToken(ctx, name, secret)
	if err != nil {
		return fmt.Errorf("registering the API token: %w", err)
	}
	if t.Revoked() {
		log.Warn("the service's own API token was revoked and is refused; replace it (delete the token file, or set a new value) and restart",
			"token", t.Name, "source", source)
	}
	return nil
}

// apiToken returns the API's bearer token: the variable [serve]
// api_token_env names, else a random token generated at first start and kept
// 0600 in <data dir>/api-token. The second value says where it is, never
// the token itself.
func apiToken(cfg *config.Config, dataDir string) (string, string, error) {
	if name := cfg.Serve.APITokenEnv; name != "" {
		v, err := apiTokenFromEnv(cfg)
		if err != nil {
			return "", "", err
		}
		return v, "$" + name, nil
	}
	path := filepath.Join(dataDir, tokenFile)
	if data, err := os.ReadFile(path); err == nil {
		if tok := strings.TrimSpace(string(data)); tok != "" {
			return tok, path, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("reading the API token: %w", err)
	}
	tok := store.NewSecret()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("writing the API token: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(tok + "\n"); err != nil {
		return "", "", fmt.Errorf("writing the API token: %w", err)
	}
	return tok, path, nil
}

// behindTLS says whether people reach the service over https (public_url
// names an https:// address) though requests may arrive here as plain
// HTTP from a TLS-terminating proxy: the dashboard's cookies must then be
// Secure, or a browser would send the session on a plain-HTTP visit too.
func behindTLS(s config.Serve) bool {
	u, err := url.Parse(s.PublicURL)
	return err == nil && u.Scheme == "https"
}
