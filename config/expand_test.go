package config

import (
	"errors"
	"strings"
	"testing"
)

func lookupFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	env := lookupFrom(map[string]string{"A": "alpha", "EMPTY": "", "B_2": "beta"})
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain $A and $ alone", "plain $A and $ alone"},
		{"${A}", "alpha"},
		{"x${A}y${B_2}z", "xalphaybetaz"},
		{"${MISSING:-dflt}", "dflt"},
		{"${EMPTY:-dflt}", "dflt"},
		{"${EMPTY}", ""},
		{"${A:-dflt}", "alpha"},
		{"${MISSING:-}", ""},
		{"${MISSING:-a:-b}", "a:-b"},
		{"$${A}", "$alpha"},
		{"${A}}", "alpha}"},
	} {
		got, err := Expand(tc.in, env)
		if err != nil || got != tc.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"${A", `unterminated "${" at byte 0`},
		{"ok ${A} then ${B", `unterminated "${" at byte 13`},
		{"${}", "invalid variable reference"},
		{"${1A}", "invalid variable reference"},
		{"${A-x}", "invalid variable reference"},
		{"${A:-${B}}", `nested "${"`},
		{"${MISSING}", "${MISSING}: variable is not set"},
	} {
		_, err := Expand(tc.in, env)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "config: ") {
			t.Errorf("Expand(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
	if _, err := Expand("${MISSING}", env); !errors.Is(err, ErrUnsetVariable) {
		t.Errorf("unset variable error %v does not wrap ErrUnsetVariable", err)
	}
}

func TestExpandErrorsNeverContainValues(t *testing.T) {
	_, err := Expand("${SECRET} ${BROKEN", lookupFrom(map[string]string{"SECRET": "hunter2"}))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v must exist and not reveal the value", err)
	}
}

func TestLoadExpandsOnlyAllowedFields(t *testing.T) {
	f := newFixture(t)
	f.env["TOKEN"] = "t0k"
	f.env["BIN"] = "/opt/bin"
	f.env["HOME"] = "/home/u"
	f.env["API_HOST"] = "api.example.com"
	f.env["REASONIX_WORKSPACE_ROOT"] = "/must/not/be/used"
	f.proj(`
[[providers]]
name = "p"
model = "m"
base_url = "https://${API_HOST}/v1"
api_key_env = "TOKEN"
[agent]
system_prompt = "keep ${TOKEN} literal"
[sandbox]
forbid_read = ["${HOME}/.ssh"]
allow_write = ["${SCRATCH:-/tmp}"]
workspace_root = "${HOME}/src"
[[plugins]]
name = "local"
command = "${BIN}/server"
args = ["--root", "${REASONIX_WORKSPACE_ROOT}", "${CLAUDE_PROJECT_DIR:-.}"]
env = { KEY = "${TOKEN}" }
[[plugins]]
name = "remote"
type = "http"
url = "https://${API_HOST}/mcp"
headers = { Authorization = "Bearer ${TOKEN}" }
`)
	c := f.load()
	if c.Providers[0].BaseURL != "https://api.example.com/v1" || c.Providers[0].APIKeyEnv != "TOKEN" {
		t.Errorf("provider = %+v", c.Providers[0])
	}
	if c.Agent.SystemPrompt != "keep ${TOKEN} literal" {
		t.Errorf("system_prompt must not be expanded: %q", c.Agent.SystemPrompt)
	}
	if c.Sandbox.ForbidRead[0] != "/home/u/.ssh" || c.Sandbox.AllowWrite[0] != "/tmp" || c.Sandbox.WorkspaceRoot != "/home/u/src" {
		t.Errorf("sandbox = %+v", c.Sandbox)
	}
	local := c.Plugins[0]
	if local.Command != "/opt/bin/server" || local.Args[1] != "${REASONIX_WORKSPACE_ROOT}" ||
		local.Args[2] != "${CLAUDE_PROJECT_DIR:-.}" || local.Env["KEY"] != "t0k" {
		t.Errorf("local plugin = %+v", local)
	}
	remote := c.Plugins[1]
	if remote.URL != "https://api.example.com/mcp" || remote.Headers["Authorization"] != "Bearer t0k" {
		t.Errorf("remote plugin = %+v", remote)
	}
}

func TestLoadExpansionErrorsNameFieldAndFile(t *testing.T) {
	f := newFixture(t)
	p := f.proj(`
[[plugins]]
name = "x"
type = "http"
url = "https://h/${BROKEN"
headers = { Authorization = "Bearer ${UNSET_TOKEN}" }
`)
	got := f.loadErr()
	wantContains(t, got,
		"config: "+p+`: plugins[x].url: unterminated "${"`,
		"config: "+p+": plugins[x].headers.Authorization: ${UNSET_TOKEN}: variable is not set")
}
