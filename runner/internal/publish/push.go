package publish

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"

	"reasonix/runner/forge"
	"reasonix/runner/store"
)

// noExec keeps git from running anything a repository's config names
// (hooks, fsmonitor) and opens only the transports a push URL may use;
// ext:: and fd:: stay closed.
var noExec = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "protocol.allow=never",
	"-c", "protocol.https.allow=always", "-c", "protocol.http.allow=always",
	"-c", "protocol.ssh.allow=always", "-c", "protocol.git.allow=always",
	"-c", "protocol.file.allow=always",
}

// push puts commit on branch at t.PushURL. Pushing a commit the branch
// already points to is a no-op, which is what makes a repeat after a crash
// harmless. The push is a fast-forward: a branch someone moved elsewhere
// is refused, not overwritten — unless the task was continued to rebase
// (Rebase left a lease): then it may replace exactly the commit the lease
// names (--force-with-lease), and nothing anyone pushed since.
func (p *Publisher) push(ctx context.Context, t Target, taskID, commit, branch string) error {
	if t.GitDir == "" || t.PushURL == "" {
		return errors.New("publish: no repository or push URL")
	}
	args := append([]string{"-C", t.GitDir}, noExec...)
	args = append(args, "push", "--porcelain", "--no-verify", "--quiet")
	lease := ""
	if taskID != "" {
		lease = p.lease(ctx, t, taskID)
	}
	if lease != "" && lease != commit {
		args = append(args, "--force-with-lease=refs/heads/"+branch+":"+lease)
	}
	args = append(args, t.PushURL, commit+":refs/heads/"+branch)
	cmd := exec.CommandContext(ctx, p.cfg.Git, args...)
	cmd.Env = authEnv(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		// A forced push repeated after a crash finds the branch at commit
		// already, not at the lease: that is success.
		if lease != "" {
			if head, herr := p.remoteHead(ctx, t, branch); herr == nil && head == commit {
				p.dropLease(ctx, t, taskID)
				return nil
			}
		}
		text := strings.TrimSpace(out.String())
		if len(text) > 1000 {
			text = "…" + text[len(text)-1000:]
		}
		return fmt.Errorf("publish: push %s to %s: %v: %s", branch, redactURL(t.PushURL), err, scrub(text, t.Token))
	}
	if lease != "" {
		p.dropLease(ctx, t, taskID)
	}
	return nil
}

// authEnv is the environment of a git command that reaches t.PushURL:
// the token only for it, in the environment (which, unlike argv, no
// other user and no sandboxed task can read), scoped to the push URL;
// credential helpers of the machine are not asked.
func authEnv(t Target) []string {
	env := gitEnv(environ())
	if header, ok := authHeader(t); ok {
		env = append(env, "GIT_CONFIG_COUNT=2",
			"GIT_CONFIG_KEY_0=http."+t.PushURL+".extraHeader", "GIT_CONFIG_VALUE_0="+header,
			"GIT_CONFIG_KEY_1=credential.helper", "GIT_CONFIG_VALUE_1=")
	}
	return env
}

// authHeader is the Authorization header for an http(s) push with a token.
func authHeader(t Target) (string, bool) {
	if t.Token == "" {
		return "", false
	}
	u, err := url.Parse(t.PushURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", false
	}
	return "Authorization: Basic " + basicCredentials(t.Kind, t.Token), true
}

// basicCredentials is the token as git-over-HTTP basic credentials, with
// the user name each forge documents for token pushes.
func basicCredentials(kind forge.Kind, token string) string {
	user := "x-access-token"
	if kind == forge.GitLab {
		user = "oauth2"
	}
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + token))
}

// gitEnv is env without variables that would point git elsewhere or add
// configuration, with prompts off.
func gitEnv(env []string) []string {
	out := make([]string, 0, len(env)+6)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") {
			continue // GIT_DIR, GIT_CONFIG_*, GIT_SSH_COMMAND, GIT_TRACE*: none is ours to inherit
		}
		out = append(out, kv)
	}
	return append(out, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
}

// redactURL removes the userinfo of a push URL for messages.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}

func plainEvent(typ string, payload any) (store.EventInput, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return store.EventInput{}, fmt.Errorf("publish: encode %s event: %w", typ, err)
	}
	return store.EventInput{Type: typ, Payload: b}, nil
}
