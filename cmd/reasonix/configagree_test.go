package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/config"
)

// agreeBase is a configuration every rule accepts, with one entry of each
// array of tables, so that a key's value is checked in a complete setting.
func agreeBase(t *testing.T) map[string]string {
	return map[string]string{
		"default_model":               `"fake"`,
		"providers.name":              `"fake"`,
		"providers.kind":              `"openai"`,
		"providers.base_url":          `"http://127.0.0.1:9/v1"`,
		"providers.model":             `"fake-model"`,
		"providers.api_key_env":       `"RX_AGREE_KEY"`,
		"plugins.name":                `"tools"`,
		"plugins.command":             `"true"`,
		"workspaces.name":             `"repo"`,
		"workspaces.repo":             fmt.Sprintf("%q", gitRepo(t)),
		"workspaces.base":             `"main"`,
		"schedules.name":              `"nightly"`,
		"schedules.cron":              `"@daily"`,
		"schedules.prompt":            `"tidy up"`,
		"webhooks.name":               `"ci"`,
		"webhooks.kind":               `"github"`,
		"webhooks.secret_env":         `"RX_AGREE_HOOK"`,
		"webhooks.prompt":             `"fix it"`,
		"bot.slack.enabled":           "true",
		"bot.slack.bot_token_env":     `"RX_AGREE_SLACK_BOT"`,
		"bot.slack.app_token_env":     `"RX_AGREE_SLACK_APP"`,
		"bot.slack.allow_users":       `["*"]`,
		"bot.slack.allow_channels":    `["C1"]`,
		"bot.telegram.enabled":        "true",
		"bot.telegram.allow_users":    `["*"]`,
		"bot.telegram.allow_chats":    `["-100"]`,
		"bot.telegram.token_env":      `"RX_AGREE_TG"`,
		"bot.routes.transport":        `"slack"`,
		"bot.routes.channel":          `"C1"`,
		"serve.api_token_env":         `"RX_AGREE_API"`,
		"runner.max_concurrent_tasks": "2",
	}
}

// agreeArrays are the arrays of tables: their keys go under [[name]].
var agreeArrays = []string{"providers", "plugins", "workspaces", "schedules", "webhooks", "bot.routes"}

// agreeTOML writes the document setting every key of values.
func agreeTOML(values map[string]string) string {
	byTable := map[string][]string{}
	for k, v := range values {
		table, leaf := "", k
		if i := strings.LastIndexByte(k, '.'); i >= 0 {
			table, leaf = k[:i], k[i+1:]
		}
		byTable[table] = append(byTable[table], leaf+" = "+v)
	}
	var b strings.Builder
	for _, table := range slices.Sorted(maps.Keys(byTable)) {
		lines := byTable[table]
		slices.Sort(lines)
		switch {
		case table == "":
		case slices.Contains(agreeArrays, table):
			fmt.Fprintf(&b, "[[%s]]\n", table)
		default:
			fmt.Fprintf(&b, "[%s]\n", table)
		}
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	return b.String()
}

// agreeType is the Go type of a dotted key.
func agreeType(t *testing.T, key string) reflect.Type {
	typ := reflect.TypeOf(config.Config{})
	for _, part := range strings.Split(key, ".") {
		found := false
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name == part {
				typ, found = f.Type, true
				break
			}
		}
		if !found {
			t.Fatalf("key %s: no field %q", key, part)
		}
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Struct {
			typ = typ.Elem()
		}
	}
	return typ
}

// agreeValues are the values tried for a key of type typ: good ones, bad
// ones, and ones that are bad only for some keys.
func agreeValues(typ reflect.Type) []string {
	if typ == reflect.TypeOf(time.Duration(0)) {
		return []string{`"-1s"`, `"0s"`, `"1s"`, `"1h"`, `"100000h"`}
	}
	switch typ.Kind() {
	case reflect.String:
		return []string{`""`, `"yolo"`, `"git__hub"`, `"ask"`, `"a b"`, `"${RX_AGREE_UNSET}"`}
	case reflect.Bool:
		return []string{"true", "false"}
	case reflect.Int, reflect.Int64:
		return []string{"-1", "0", "1", "3", "100000", "2000000000"}
	case reflect.Float64:
		return []string{"-1.5", "0.0", "0.5", "1.5", "1e9"}
	case reflect.Slice:
		return []string{"[]", `["x"]`, `[""]`, `["git__hub"]`}
	case reflect.Map:
		var out []string
		elems := agreeValues(typ.Elem())
		for _, v := range elems[:min(2, len(elems))] {
			out = append(out, "{ x = "+v+" }", `{ "a b" = `+v+" }")
		}
		return append(out, "{}")
	case reflect.Struct:
		return []string{"{}"}
	}
	return nil
}

// TestConfigCheckAndServeAgree: for every key and a spread of values,
// `config check` and serve's start-up checks both accept the
// configuration or both refuse it with the same message. The one
// difference is on purpose: serve starts without a model, or without the
// model's key, and warns, where config check requires them.
func TestConfigCheckAndServeAgree(t *testing.T) {
	home := t.TempDir()
	for k, v := range map[string]string{
		"REASONIX_HOME": home, "REASONIX_ADDR": "", "REASONIX_DATA_DIR": "", "REASONIX_STORE_DSN": "", "REASONIX_CONFIG": "",
		"RX_AGREE_KEY": "sk-agree", "RX_AGREE_HOOK": "hook-secret", "RX_AGREE_SLACK_BOT": "xoxb-1", "RX_AGREE_SLACK_APP": "xapp-1",
		"RX_AGREE_TG": "123:tg", "RX_AGREE_API": "api-secret", "yolo": "",
	} {
		t.Setenv(k, v)
	}
	os.Unsetenv("RX_AGREE_UNSET")
	dir := t.TempDir()
	// check writes the document as file n and runs both commands' checks.
	check := func(n int, values map[string]string) (cc, serve error) {
		file := filepath.Join(dir, fmt.Sprintf("%d.toml", n))
		if err := os.WriteFile(file, []byte(agreeTOML(values)), 0o600); err != nil {
			t.Error(err)
			return nil, nil
		}
		_, serve = loadCheckedServiceConfig(file)
		return configCheck(file, io.Discard, io.Discard), serve
	}
	base := agreeBase(t)
	if cc, serve := check(0, base); cc != nil || serve != nil {
		t.Fatalf("the base configuration is refused:\n%s\nconfig check: %v\nserve: %v", agreeTOML(base), cc, serve)
	}

	type trial struct{ key, value string }
	var trials []trial
	for _, key := range config.Keys() {
		values := agreeValues(agreeType(t, key))
		if len(values) == 0 {
			t.Fatalf("key %s: no values to try", key)
		}
		for _, v := range values {
			trials = append(trials, trial{key, v})
		}
	}
	// The checks mostly wait on git and the sandbox probe's processes: run
	// a few at once.
	var (
		mu                sync.Mutex
		accepted, refused int
		refusedKeys       = map[string]bool{}
		next              = make(chan int)
		wg                sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				tr := trials[i]
				doc := maps.Clone(base)
				if !strings.HasPrefix(tr.key, "workspaces.") {
					// Checking a workspace runs git: only where it is the
					// point, or the test takes a minute.
					maps.DeleteFunc(doc, func(k, _ string) bool { return strings.HasPrefix(k, "workspaces.") })
				}
				doc[tr.key] = tr.value
				cc, serve := check(i+1, doc)
				mu.Lock()
				switch {
				case cc == nil && serve == nil:
					accepted++
				case cc != nil && serve != nil && cc.Error() == serve.Error():
					refused++
					refusedKeys[tr.key+" = "+tr.value] = true
				case cc != nil && serve == nil && modelMissing(cc):
					accepted++
				default:
					t.Errorf("%s = %s:\nconfig check: %v\nserve:        %v", tr.key, tr.value, cc, serve)
				}
				mu.Unlock()
			}
		})
	}
	for i := range trials {
		next <- i
	}
	close(next)
	wg.Wait()
	// The case this test was written for: the MCP manager refuses the
	// name at a task's first step, so config check must too.
	if !refusedKeys[`plugins.name = "git__hub"`] {
		t.Error(`[[plugins]] name = "git__hub" is accepted`)
	}
	// And serve itself stops there, before it listens.
	doc := maps.Clone(base)
	doc["plugins.name"] = `"git__hub"`
	_, want := check(len(trials)+1, doc)
	served := make(chan error, 1)
	go func() {
		served <- serveCommand(filepath.Join(dir, fmt.Sprintf("%d.toml", len(trials)+1)), "127.0.0.1:0", "", io.Discard, io.Discard)
	}()
	select {
	case err := <-served:
		if want == nil || err == nil || err.Error() != want.Error() {
			t.Errorf("serve with a plugin named git__hub: %v, want %v", err, want)
		}
	case <-time.After(time.Minute):
		t.Error("serve started with a plugin named git__hub")
	}
	if accepted < 100 || refused < 100 {
		t.Errorf("%d values accepted and %d refused: the table no longer exercises both", accepted, refused)
	}
	t.Logf("%d keys, %d values accepted, %d refused by both", len(config.Keys()), accepted, refused)
}

// modelMissing: config check refused for want of the default model or its
// key, which serve tolerates with a warning.
func modelMissing(err error) bool {
	return strings.Contains(err.Error(), "needs its API key in $") || strings.Contains(err.Error(), "no model is configured")
}
