package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"reasonix/acp"
	"reasonix/config"
	"reasonix/runner/client"
)

// acpFlags registers `reasonix acp`'s flags: the startup model and work
// mode of every session the editor opens.
func acpFlags(fs *flag.FlagSet) action {
	var configFile, model, profile, server string
	fs.StringVar(&configFile, "config", "", "configuration `file` (replaces ./reasonix.toml)")
	fs.StringVar(&model, "model", "", "startup model `reference`: a provider name, a model name or provider/model")
	fs.StringVar(&profile, "profile", "balanced", "startup work mode: `economy|balanced|delivery`")
	fs.StringVar(&server, "server", "", "the service's base `URL`: the editor's sessions are its tasks (token: REASONIX_API_TOKEN, [serve] api_token_env, or <data dir>/api-token)")
	return func(args []string, stdout, stderr io.Writer) error {
		if len(args) > 0 {
			return usageErrorf("acp takes no arguments; the editor sends the work over the protocol")
		}
		switch profile {
		case "economy", "balanced", "delivery":
		default:
			return usageErrorf("--profile must be economy, balanced or delivery")
		}
		var api *client.Client
		if server != "" {
			// The token is read before the environment is sealed.
			c, err := (&clientFlags{config: configFile, server: server}).newClient()
			if err != nil {
				return err
			}
			api = c
		}
		cfg, err := loadConfig(configFile, false)
		if err != nil {
			return err
		}
		if err := sealEnvironment(cfg); err != nil {
			return err
		}
		for _, w := range cfg.Warnings() {
			fmt.Fprintf(stderr, "reasonix: warning: %s\n", w)
		}
		// Standard output is the protocol's: anything else that writes to
		// os.Stdout (a library's stray print) goes to standard error.
		if stdout == io.Writer(os.Stdout) {
			os.Stdout = os.Stderr
		}
		a, err := acp.New(acp.Config{
			Settings:        cfg,
			ProjectSettings: projectSettings(cfg, configFile, server),
			Model:           model,
			WorkMode:        profile,
			Logger:          slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Version:         version,
			Server:          api,
		})
		if err != nil {
			return &configError{err}
		}
		ctx, stop := signalContext()
		defer stop()
		return a.Serve(ctx, os.Stdin, stdout)
	}
}

// projectSettings reads the configuration of each ACP session's own cwd,
// as `reasonix run` in that directory would (trust rules included: an
// untrusted project file may only tighten). The launch directory's is
// the one already loaded. With --config, or --server (the service holds
// the configuration), every session uses the loaded one.
func projectSettings(cfg *config.Config, file, server string) func(string) (*config.Config, error) {
	if file != "" || server != "" {
		return nil
	}
	launch, err := os.Getwd()
	if err == nil {
		launch, err = filepath.EvalSymlinks(launch)
	}
	return func(cwd string) (*config.Config, error) {
		if err == nil && cwd == launch {
			return cfg, nil
		}
		return config.Load(config.LoadOptions{ProjectDir: cwd, RequireTrust: true})
	}
}

// acpAttachExec is `reasonix acp attach SOCKET`, the command an editor's
// terminal runs (terminal/create) to show a bash command that runs in the
// agent's sandbox: it prints the command's output as it comes and exits
// with its exit status. It runs before anything else (no configuration,
// no secrets) and exits; any other command line returns at once. The
// one-time token is in the environment, never in the arguments, and is
// dropped from it at once.
func acpAttachExec() {
	if len(os.Args) < 3 || os.Args[1] != "acp" || os.Args[2] != "attach" {
		return
	}
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "reasonix: acp attach takes the agent's socket; the editor runs it as the agent asks")
		os.Exit(exitUsage)
	}
	token := os.Getenv(acp.AttachTokenEnv)
	os.Unsetenv(acp.AttachTokenEnv)
	ctx, stop := signalContext()
	code, err := acp.Attach(ctx, os.Args[3], token, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "reasonix: acp attach: %v\n", err)
		os.Exit(exitFailed)
	}
	os.Exit(acp.ExitStatus(code))
}
