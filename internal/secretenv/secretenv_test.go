package secretenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// reset forgets what earlier tests read.
func reset(t *testing.T) {
	t.Helper()
	state.mu.Lock()
	state.values, state.files, state.received = nil, nil, false
	state.mu.Unlock()
	t.Cleanup(func() {
		state.mu.Lock()
		state.values, state.files, state.received = nil, nil, false
		state.mu.Unlock()
	})
}

// The variable wins over its _FILE, which wins over the systemd credential.
func TestLookupOrder(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds")
	if err := os.Mkdir(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(creds, "TOK_A"), "from-credential-a\n")
	write(filepath.Join(creds, "TOK_B"), "from-credential-b\n")
	write(filepath.Join(creds, "TOK_C"), "from-credential-c")
	write(filepath.Join(dir, "b"), "from-file-b\r\n")
	write(filepath.Join(dir, "a"), "from-file-a\n")
	t.Setenv(CredentialsDirEnv, creds)
	t.Setenv("TOK_A", "from-env-a")
	t.Setenv("TOK_A_FILE", filepath.Join(dir, "a"))
	t.Setenv("TOK_B", "") // empty counts as unset
	t.Setenv("TOK_B_FILE", filepath.Join(dir, "b"))
	t.Setenv("TOK_D_FILE", filepath.Join(dir, "missing"))
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"TOK_A", "from-env-a", true},
		{"TOK_B", "from-file-b", true},
		{"TOK_C", "from-credential-c", true},
		{"TOK_D", "", false},
		{"TOK_E", "", false},
		{"../creds/TOK_C", "", false},
	} {
		reset(t)
		got, ok := Lookup(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Lookup(%s) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	reset(t)
	if _, _, err := Check("TOK_D"); err == nil || !strings.Contains(err.Error(), "TOK_D") {
		t.Errorf("Check(TOK_D) error = %v, want one naming the variable", err)
	}
	Lookup("TOK_B")
	Lookup("TOK_C")
	if got := Files(); !slices.Contains(got, filepath.Join(dir, "b")) || !slices.Contains(got, filepath.Join(creds, "TOK_C")) || !slices.Contains(got, creds) {
		t.Errorf("Files() = %v", got)
	}
	if got := Values(); !slices.Equal(got, []string{"from-credential-c", "from-file-b"}) {
		t.Errorf("Values() = %v", got)
	}
}

func TestSecretlike(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "AWS_SECRET_ACCESS_KEY": true, "OPENAI_API_KEY": true, "DB_PASSWORD": true,
		"REASONIX_STORE_DSN": true, "SLACK_SIGNING_SECRET": true, "MY_APIKEY": true, "token": true,
		"SSH_AUTH_SOCK": false, "GIT_ASKPASS": false, "PATH": false, "HOME": false, "KEYBOARD": false,
		"GOFLAGS": false, "TOKENIZERS_PARALLELISM": false,
	} {
		if got := Secretlike(name); got != want {
			t.Errorf("Secretlike(%s) = %v, want %v", name, got, want)
		}
	}
}

// The plan takes out every named or secret-looking variable and the _FILE
// variables of secrets, and nothing else.
func TestPlan(t *testing.T) {
	p := newPlan([]string{"MODEL_CRED", "UNSET_ONE"}, []string{
		"PATH=/bin", "MODEL_CRED=x", "GITHUB_TOKEN=y", "BOT_TOKEN_FILE=/run/s/bot", "SSH_AUTH_SOCK=/s",
		"REASONIX_SECRETS_FD=3", "HOME=/h",
	})
	if want := []string{"BOT_TOKEN", "GITHUB_TOKEN", "MODEL_CRED", "UNSET_ONE"}; !slices.Equal(p.secrets, want) {
		t.Errorf("secrets = %v, want %v", p.secrets, want)
	}
	if want := []string{"BOT_TOKEN_FILE", "GITHUB_TOKEN", "MODEL_CRED"}; !slices.Equal(p.scrub, want) {
		t.Errorf("scrub = %v, want %v", p.scrub, want)
	}
}

// A secret file the configuration relies on must be readable: Seal says
// which, before anything is exec'd.
func TestSealRefusesAnUnreadableConfiguredFile(t *testing.T) {
	reset(t)
	t.Setenv("CONFIGURED_SECRET_FILE", filepath.Join(t.TempDir(), "missing"))
	err := Seal([]string{"CONFIGURED_SECRET"})
	if err == nil || !strings.Contains(err.Error(), "CONFIGURED_SECRET") {
		t.Fatalf("Seal = %v, want an error naming the variable", err)
	}
}
