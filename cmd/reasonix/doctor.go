package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"time"

	"reasonix/config"
	"reasonix/policy"
)

// doctorCommand is `reasonix doctor`: check everything a run or the service
// needs and say what to fix. It exits 1 when a check failed.
func doctorCommand(args []string, stdout, stderr io.Writer) error {
	file, err := configFlag("doctor", args, stderr)
	if err != nil {
		return err
	}
	d := &doctor{w: stdout}
	cfg, err := config.Load(config.LoadOptions{File: file})
	if err != nil {
		d.fail("config", err.Error())
		return d.result()
	}
	d.ok("config", fmt.Sprintf("%d file(s) read: %v", len(cfg.Sources()), cfg.Sources()))

	if _, err := buildPolicy(cfg); err != nil {
		d.fail("permissions", err.Error())
	} else {
		d.ok("permissions", fmt.Sprintf("mode %s, posture %s, %d allow / %d ask / %d deny rules",
			cfg.Permissions.Mode, cfg.Permissions.Posture, len(cfg.Permissions.Allow), len(cfg.Permissions.Ask), len(cfg.Permissions.Deny)))
	}

	ref, err := cfg.ResolveModel("")
	switch {
	case err != nil:
		d.fail("model", err.Error())
	case ref.APIKeyEnv != "" && os.Getenv(ref.APIKeyEnv) == "":
		d.fail("model", fmt.Sprintf("%s/%s: $%s is not set", ref.Name, ref.Model, ref.APIKeyEnv))
	default:
		d.ok("model", fmt.Sprintf("%s/%s (key in $%s)", ref.Name, ref.Model, cmpString(ref.APIKeyEnv, "none")))
		d.reachable(ref)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st, err := openStore(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		d.fail("store", err.Error())
	} else {
		if v, err := st.SchemaVersion(ctx); err != nil {
			d.fail("store", err.Error())
		} else {
			d.ok("store", fmt.Sprintf("%s, schema version %d", st.Driver(), v))
		}
		st.Close()
	}

	if _, err := exec.LookPath("git"); err != nil {
		d.fail("git", "git is not on PATH: workspaces need it")
	} else {
		d.ok("git", "found")
	}
	d.sandbox(cfg)
	return d.result()
}

type doctor struct {
	w      io.Writer
	failed int
}

func (d *doctor) ok(what, msg string)   { fmt.Fprintf(d.w, "ok    %-12s %s\n", what, msg) }
func (d *doctor) warn(what, msg string) { fmt.Fprintf(d.w, "warn  %-12s %s\n", what, msg) }
func (d *doctor) fail(what, msg string) {
	d.failed++
	fmt.Fprintf(d.w, "FAIL  %-12s %s\n", what, msg)
}

func (d *doctor) result() error {
	if d.failed > 0 {
		return fmt.Errorf("doctor: %d check(s) failed", d.failed)
	}
	return nil
}

// reachable makes one unauthenticated request to the provider's endpoint:
// any HTTP answer proves the network path works.
func (d *doctor) reachable(ref config.ProviderRef) {
	target := cmpString(ref.RequestURL, cmpString(ref.BaseURL, "https://api.openai.com/v1"))
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(target)
	if err != nil {
		d.fail("endpoint", fmt.Sprintf("%s is not reachable: %v", target, err))
		return
	}
	resp.Body.Close()
	d.ok("endpoint", fmt.Sprintf("%s answered HTTP %d", target, resp.StatusCode))
}

// sandbox reports whether the bash sandbox is usable, and whether it must be.
func (d *doctor) sandbox(cfg *config.Config) {
	wd, _ := os.Getwd()
	switch {
	case bwrapWorks(wd):
		d.ok("sandbox", fmt.Sprintf("bubblewrap works; [sandbox] bash = %q", cfg.Sandbox.Bash))
	case cfg.Sandbox.Bash == config.BashEnforce:
		d.fail("sandbox", "[sandbox] bash = \"enforce\" but bubblewrap is not usable: bash will be refused (install bubblewrap)")
	default:
		d.warn("sandbox", "bubblewrap is not usable; bash runs unconfined ([sandbox] bash = \"off\")")
	}
}

// bwrapWorks runs a trivial command through the sandbox wrapper.
func bwrapWorks(dir string) bool {
	c, err := policy.NewConfinement(policy.SandboxConfig{WorkspaceRoot: dir, Bash: config.BashEnforce})
	if err != nil || c.Shell() == nil {
		return false
	}
	argv, err := c.Shell().WrapShell(dir, "true")
	if err != nil {
		return false
	}
	return exec.Command(argv[0], argv[1:]...).Run() == nil
}
