package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"reasonix/config"
)

// initOptions are `reasonix init`'s flags.
type initOptions struct {
	force    bool
	provider string
	baseURL  string
	model    string
	keyEnv   string
}

func initFlags(fs *flag.FlagSet) action {
	var o initOptions
	fs.BoolVar(&o.force, "force", false, "overwrite an existing ./reasonix.toml")
	fs.StringVar(&o.provider, "provider", "deepseek", "the provider entry's `name`")
	fs.StringVar(&o.baseURL, "base-url", "https://api.deepseek.com/v1", "the provider's OpenAI-compatible `URL`")
	fs.StringVar(&o.model, "model", "deepseek-chat", "the `model` to use")
	fs.StringVar(&o.keyEnv, "key-env", "DEEPSEEK_API_KEY", "the environment `variable` holding the API key (\"\" for none)")
	return func(_ []string, stdout, _ io.Writer) error { return initCommand(o, stdout) }
}

// initCommand is `reasonix init`: a starter configuration a newcomer can
// run with after exporting one variable. It refuses to replace a file
// someone may have edited.
func initCommand(o initOptions, stdout io.Writer) error {
	if !validName(o.provider) {
		return usageErrorf("--provider %q: use letters, digits, '.', '_' or '-'", o.provider)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	const file = "reasonix.toml"
	ws, wsNote := detectWorkspace(cwd)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by `reasonix init`. Every key is documented in reasonix.example.toml.\n")
	fmt.Fprintf(&b, "# Secrets never go in this file: api_key_env names the variable that holds the key.\n\n")
	fmt.Fprintf(&b, "default_model = %q\n\n", o.provider)
	fmt.Fprintf(&b, "[[providers]]\nname        = %q\nkind        = \"openai\"\nbase_url    = %q\nmodel       = %q\n", o.provider, o.baseURL, o.model)
	if o.keyEnv != "" {
		fmt.Fprintf(&b, "api_key_env = %q\n", o.keyEnv)
	}
	if ws != nil {
		fmt.Fprintf(&b, "\n# The repository tasks of `reasonix serve` work in (each in its own git worktree).\n")
		fmt.Fprintf(&b, "[[workspaces]]\nname = %q\nrepo = %q\nbase = %q\n", ws.Name, ws.Repo, ws.Base)
	}

	flags := os.O_CREATE | os.O_WRONLY | os.O_EXCL
	if o.force {
		flags = os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	}
	f, err := os.OpenFile(file, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("./%s already exists; pass --force to overwrite it", file)
	}
	if err != nil {
		return fmt.Errorf("writing ./%s: %w", file, err)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("writing ./%s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing ./%s: %w", file, err)
	}

	fmt.Fprintf(stdout, "wrote ./%s: provider %s (model %s)", file, o.provider, o.model)
	if ws != nil {
		fmt.Fprintf(stdout, ", workspace %s (repo %s, base %s)", ws.Name, ws.Repo, ws.Base)
	}
	fmt.Fprintln(stdout)
	if wsNote != "" {
		fmt.Fprintln(stdout, wsNote)
	}
	// The person wrote this file, so the directory is trusted — unless it
	// holds a .mcp.json they may not have read (a fresh clone's).
	if _, err := os.Stat(config.MCPJSONFile); err == nil {
		fmt.Fprintf(stdout, "./%s is not trusted yet: read it, then run `reasonix trust`\n", config.MCPJSONFile)
	} else if home, err := reasonixHome(); err != nil {
		fmt.Fprintf(stdout, "could not trust this directory (%v): run `reasonix trust`\n", err)
	} else if dir, err := config.Trust(home, "."); err != nil {
		fmt.Fprintf(stdout, "could not trust this directory (%v): run `reasonix trust`\n", err)
	} else {
		fmt.Fprintf(stdout, "trusted %s (reasonix run obeys its config in full)\n", dir)
	}
	fmt.Fprintln(stdout, "\nNext:")
	if o.keyEnv != "" {
		fmt.Fprintf(stdout, "  export %s=...        # the provider's API key; the file only names the variable\n", o.keyEnv)
	}
	fmt.Fprintln(stdout, "  reasonix config check")
	fmt.Fprintln(stdout, "  reasonix run \"describe this repository\"")
	return nil
}

// detectWorkspace proposes a workspace for the git repository around dir,
// on its current branch; nil (with a note saying why) when there is none
// that would pass `config check`.
func detectWorkspace(dir string) (*config.Workspace, string) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, "no workspace: this is not a git repository (add a [[workspaces]] entry for `reasonix serve` later)"
	}
	branch, err := git("symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return nil, "no workspace: HEAD is not on a branch (add a [[workspaces]] entry with a base branch)"
	}
	if _, err := git("rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return nil, "no workspace: the repository has no commit yet (commit, then add a [[workspaces]] entry)"
	}
	repo := top
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		if rel, err := filepath.Rel(real, top); err == nil {
			repo = rel // relative to the file, so the checkout can move
		}
	}
	return &config.Workspace{Name: entryName(filepath.Base(top)), Repo: repo, Base: branch}, ""
}

// entryName turns a directory name into a valid entry name.
func entryName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '.' || r == '_' || r == '-':
			if b.Len() > 0 {
				b.WriteRune(r)
			}
		default:
			if b.Len() > 0 {
				b.WriteByte('-')
			}
		}
	}
	if b.Len() == 0 {
		return "repo"
	}
	return b.String()
}

func validName(s string) bool { return s != "" && entryName(s) == s }
