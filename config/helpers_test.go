package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a fake home and project directory with a fake environment.
type fixture struct {
	t       *testing.T
	home    string // the Reasonix home (holds config.toml)
	project string
	env     map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{t: t, home: filepath.Join(root, "home"), project: filepath.Join(root, "proj"), env: map[string]string{}}
	for _, d := range []string{f.home, f.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) write(path, content string) string {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return path
}

func (f *fixture) user(content string) string {
	return f.write(filepath.Join(f.home, UserFile), content)
}

func (f *fixture) proj(content string) string {
	return f.write(filepath.Join(f.project, ProjectFile), content)
}

func (f *fixture) opts() LoadOptions {
	return LoadOptions{ProjectDir: f.project, Home: f.home, Env: func(k string) (string, bool) {
		v, ok := f.env[k]
		return v, ok
	}}
}

func (f *fixture) load() *Config {
	f.t.Helper()
	c, err := Load(f.opts())
	if err != nil {
		f.t.Fatalf("Load: %v", err)
	}
	return c
}

func (f *fixture) loadErr() string {
	f.t.Helper()
	_, err := Load(f.opts())
	if err == nil {
		f.t.Fatal("Load succeeded, want an error")
	}
	return err.Error()
}

func wantContains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("error %q\ndoes not contain %q", got, w)
		}
	}
}

const minimalProvider = `
[[providers]]
name = "p"
model = "m"
`
