package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"reasonix/internal/secretenv"
)

// LoadOptions says where to look for configuration. The zero value loads
// the project config of the current directory over the user config.
type LoadOptions struct {
	// ProjectDir holds reasonix.toml (or .reasonix/reasonix.toml) and
	// .mcp.json; "" = the current directory.
	ProjectDir string
	// File is the --config flag: it replaces the project config lookup (the
	// user config still applies underneath) and must exist.
	File string
	// Home replaces ~/.reasonix; "" = $REASONIX_HOME, else $HOME/.reasonix.
	Home string
	// Env looks up environment variables for ${VAR} expansion and the home
	// directory; nil = secretenv.Lookup (the environment, then NAME_FILE,
	// then the systemd credential NAME, and the secrets it took out of the
	// environment at start).
	Env func(string) (string, bool)
	// SkipMCPJSON ignores the project's .mcp.json, e.g. for a service that
	// refuses servers declared by a checkout.
	SkipMCPJSON bool
	// RequireTrust treats the project directory's own reasonix.toml and
	// .mcp.json as untrusted unless `reasonix trust` recorded the directory
	// (see TrustFile) or TrustProject is set. Untrusted, they may only
	// tighten the configuration: a key that loosens it or starts a process
	// is an error wrapping ErrUntrusted that names the key. A File the
	// caller names is trusted.
	RequireTrust bool
	TrustProject bool
}

// Names of the files Load looks for.
const (
	UserFile      = "config.toml"   // inside the Reasonix home
	ProjectFile   = "reasonix.toml" // in the project directory
	ProjectAltDir = ".reasonix"     // holds ProjectFile when the root has none
	MCPJSONFile   = ".mcp.json"     // Claude Code's server list, in the project directory
	maxConfigSize = 4 << 20         // a config file larger than this is a mistake
	homeDirName   = ".reasonix"     // under the user's home directory
	homeEnv       = "REASONIX_HOME" // replaces ~/.reasonix
)

// Load reads the user config, the project's .mcp.json and the project
// config (or opts.File), merges them over Default, expands ${VAR} where
// allowed, and validates the result. A missing file is skipped, but a file
// that exists and cannot be read or parsed is an error (there is no
// fallback to the next candidate). All problems found are returned together.
//
// Flags are not Load's business: the caller sets fields on the returned
// Config, records them with SetOrigin and calls Validate again.
func Load(opts LoadOptions) (*Config, error) {
	env := opts.Env
	if env == nil {
		env = secretenv.Lookup
	}
	c := Default()
	home, err := reasonixHome(opts, env)
	if err != nil {
		return nil, err
	}
	c.home = home
	projectDir, err := filepath.Abs(cmp.Or(opts.ProjectDir, "."))
	if err != nil {
		return nil, fmt.Errorf("config: project directory: %w", err)
	}
	project, err := projectConfig(opts.File, projectDir)
	if err != nil {
		return nil, err
	}

	l := loader{c: c}
	if home != "" {
		l.readTOML(filepath.Join(home, UserFile), false)
	}
	if opts.RequireTrust && !opts.TrustProject && opts.File == "" {
		if l.untrustedDir, err = untrustedDir(home, projectDir); err != nil {
			return nil, err
		}
	}
	if !opts.SkipMCPJSON {
		l.readMCPJSON(filepath.Join(projectDir, MCPJSONFile))
	}
	if project != "" {
		l.project = project
		if opts.File == "" {
			l.projectDir = projectDir
		}
		l.readTOML(project, true)
	}
	if err := l.p.err(); err != nil {
		return nil, err
	}
	l.finish(env)
	if err := l.p.err(); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// reasonixHome finds the Reasonix home. Only a real environment falls back
// to the OS notion of the home directory, so tests with a fake Env never
// read the developer's own config.
func reasonixHome(opts LoadOptions, env func(string) (string, bool)) (string, error) {
	home := opts.Home
	if home == "" {
		home, _ = env(homeEnv)
	}
	if home == "" {
		if h, _ := env("HOME"); h != "" {
			home = filepath.Join(h, homeDirName)
		} else if opts.Env == nil {
			if h, err := os.UserHomeDir(); err == nil {
				home = filepath.Join(h, homeDirName)
			}
		}
	}
	if home == "" {
		return "", nil
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return "", fmt.Errorf("config: reasonix home: %w", err)
	}
	return abs, nil
}

// projectConfig picks the project file: file when given, else
// ./reasonix.toml, else .reasonix/reasonix.toml. A candidate that exists
// but cannot be inspected stops the search rather than falling through.
func projectConfig(file, dir string) (string, error) {
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return "", fmt.Errorf("config: %s: %w", file, err)
		}
		return abs, nil
	}
	for _, cand := range []string{
		filepath.Join(dir, ProjectFile),
		filepath.Join(dir, ProjectAltDir, ProjectFile),
	} {
		_, err := os.Stat(cand)
		switch {
		case err == nil:
			return cand, nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("config: %s: %w", cand, err)
		}
	}
	return "", nil
}

// loader merges files into c in precedence order, lowest first.
type loader struct {
	c *Config
	p problems
	// project is the project file; untrustedDir is its directory when it
	// is not trusted (see LoadOptions.RequireTrust), else "".
	project, untrustedDir string
	// projectDir is set when project is the project directory's own file
	// (not one --config named): its system_prompt_file must stay inside.
	projectDir string
}

// readFile reads a regular file of bounded size. found is false only when
// the file does not exist.
func readFile(path string) (data []byte, found bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return nil, true, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, true, err
	}
	if !info.Mode().IsRegular() {
		return nil, true, errors.New("not a regular file")
	}
	data, err = io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, true, err
	}
	if len(data) > maxConfigSize {
		return nil, true, fmt.Errorf("larger than %d bytes", maxConfigSize)
	}
	return data, true, nil
}

// durationKeys must be written as strings: the decoder would take a bare
// integer as nanoseconds, which is never what a person means.
var durationKeys = [][]string{
	{"agent", "goal_wall_clock"},
	{"runner", "task_timeout"},
	{"runner", "approval_ttl"},
	{"runner", "stall_after"},
	{"bot", "approval_remind"},
}

func (l *loader) readTOML(path string, required bool) {
	data, found, err := readFile(path)
	if !found {
		if required {
			l.p.errs = append(l.p.errs, &FileError{File: path, Err: fs.ErrNotExist})
		}
		return
	}
	if err != nil {
		l.p.errs = append(l.p.errs, &FileError{File: path, Err: err})
		return
	}
	l.c.sources = append(l.c.sources, path)

	var fc Config
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&fc)
	if err != nil {
		l.p.errs = append(l.p.errs, decodeErrors(path, data, err)...)
		return
	}
	bad := len(l.p.errs)
	seedWarnings, seedCovered := seedKeyWarnings(path, &md)
	l.c.warnings = append(l.c.warnings, seedWarnings...)
	for _, k := range unknownKeys(md, seedCovered) {
		l.p.errs = append(l.p.errs, &FileError{File: path, Err: fmt.Errorf("unknown key %q", k)})
	}
	for _, k := range misCasedKeys(md) {
		l.p.errs = append(l.p.errs, &FileError{File: path,
			Err: fmt.Errorf("unknown key %q (keys are case-sensitive: write %q)", k[0], k[1])})
	}
	for _, k := range durationKeys {
		if md.Type(k...) == "Integer" {
			l.p.errs = append(l.p.errs, &FileError{File: path, Key: strings.Join(k, "."),
				Err: errors.New(`must be a duration string such as "90m" or "2h"`)})
		}
	}
	ignorePrompt := false
	var ignored []string
	if path == l.project && l.untrustedDir != "" {
		var bad []string
		bad, ignored = l.untrustedProblems(&fc, &md, seedCovered)
		if len(bad) > 0 {
			l.p.errs = append(l.p.errs, untrustedError(path, fmt.Sprintf("%s would loosen the configuration", quoteKeys(bad)), l.untrustedDir))
		}
		if len(ignored) > 0 {
			leaveOut(&fc, l.c, ignored)
			ignorePrompt = slices.Contains(ignored, "agent.system_prompt_file")
			l.c.warnings = append(l.c.warnings, fmt.Sprintf("%s: %s ignored: %s a file, command, URL or environment variable, and the directory is not trusted; trust it with `reasonix trust %s`",
				path, quoteKeys(ignored), nameVerb(len(ignored)), l.untrustedDir))
		}
	}
	var prompt, promptFile string
	hasPromptFile := false
	if !ignorePrompt {
		prompt, promptFile, hasPromptFile = l.systemPrompt(path, &fc, &md)
	}
	if len(l.p.errs) > bad {
		return
	}

	kept := l.keepOrigins(ignored)
	mergeKeys(l.c, &fc, &md, path)
	for k, v := range kept {
		if v == "" {
			delete(l.c.origins, k)
		} else {
			l.c.origins[k] = v
		}
	}
	if hasPromptFile {
		l.c.Agent.SystemPrompt, l.c.Agent.SystemPromptFile = prompt, promptFile
		l.c.origins["agent.system_prompt"] = path
	} else if md.IsDefined("agent", "system_prompt") && !ignorePrompt {
		l.c.Agent.SystemPromptFile = ""
		l.c.origins["agent.system_prompt_file"] = path
	}

	markContextWindows(data, fc.Providers)
	for i := range fc.Providers {
		fc.Providers[i].Source = path
	}
	for i := range fc.Plugins {
		fc.Plugins[i].Source = path
	}
	for i := range fc.Workspaces {
		fc.Workspaces[i].Source = path
	}
	for i := range fc.Schedules {
		fc.Schedules[i].Source = path
	}
	for i := range fc.Webhooks {
		fc.Webhooks[i].Source = path
	}
	l.c.Providers = mergeEntries(&l.p, path, "providers", l.c.Providers, fc.Providers, func(p *Provider) string { return p.Name })
	l.c.Plugins = mergeEntries(&l.p, path, "plugins", l.c.Plugins, fc.Plugins, func(p *Plugin) string { return p.Name })
	l.c.Workspaces = mergeEntries(&l.p, path, "workspaces", l.c.Workspaces, fc.Workspaces, func(w *Workspace) string { return w.Name })
	l.c.Schedules = mergeEntries(&l.p, path, "schedules", l.c.Schedules, fc.Schedules, func(s *Schedule) string { return s.Name })
	l.c.Webhooks = mergeEntries(&l.p, path, "webhooks", l.c.Webhooks, fc.Webhooks, func(w *Webhook) string { return w.Name })
}

// keepOrigins saves the origins of the tables ignored keys live in, so a
// value left out keeps the origin of the file that really set it (a
// relative path is resolved against that file).
func (l *loader) keepOrigins(ignored []string) map[string]string {
	kept := map[string]string{}
	for _, k := range ignored {
		segs := strings.SplitN(k, ".", 3)
		key := segs[0]
		if len(segs) > 1 {
			key += "." + segs[1]
		}
		kept[key] = l.c.origins[key]
	}
	return kept
}

// systemPrompt reads system_prompt_file when this file sets it, relative to
// the file's own directory.
func (l *loader) systemPrompt(path string, fc *Config, md *toml.MetaData) (prompt, file string, ok bool) {
	hasFile := md.IsDefined("agent", "system_prompt_file")
	if hasFile && md.IsDefined("agent", "system_prompt") {
		l.p.errs = append(l.p.errs, &FileError{File: path, Key: "agent.system_prompt_file",
			Err: errors.New("set either system_prompt or system_prompt_file, not both")})
		return "", "", false
	}
	if !hasFile || fc.Agent.SystemPromptFile == "" {
		return "", "", false
	}
	file = resolveFrom(fc.Agent.SystemPromptFile, path)
	if path == l.project && l.projectDir != "" {
		forbid := append(slices.Clone(l.c.Sandbox.ForbidRead), fc.Sandbox.ForbidRead...)
		if err := confinePromptFile(fc.Agent.SystemPromptFile, file, l.projectDir, forbid); err != nil {
			l.p.errs = append(l.p.errs, &FileError{File: path, Key: "agent.system_prompt_file", Err: err})
			return "", "", false
		}
	}
	data, found, err := readFile(file)
	if !found {
		err = fs.ErrNotExist
	}
	if err == nil && len(data) > maxPromptBytes {
		err = fmt.Errorf("larger than %d bytes", maxPromptBytes)
	}
	if err != nil {
		l.p.errs = append(l.p.errs, &FileError{File: path, Key: "agent.system_prompt_file",
			Err: fmt.Errorf("%s: %w", file, err)})
		return "", "", false
	}
	return string(data), file, true
}

// unknownKeys lists keys the file set that no field took, outermost only:
// a misspelt table is reported once, not once per key inside it.
// Keys in accepted (seedkeys.go) are left out first.
func unknownKeys(md toml.MetaData, accepted map[string]bool) []string {
	undecoded := slices.DeleteFunc(md.Undecoded(), func(k toml.Key) bool { return accepted[k.String()] })
	set := make(map[string]bool, len(undecoded))
	for _, k := range undecoded {
		set[k.String()] = true
	}
	var out []string
outer:
	for _, k := range undecoded {
		for n := 1; n < len(k); n++ {
			if set[k[:n].String()] {
				continue outer
			}
		}
		out = append(out, k.String())
	}
	return out
}

// mergeKeys copies every top-level key and every key of a top-level table
// that the file defined from src into dst, recording its origin. Arrays of
// tables are skipped: they merge by name. The permission rule lists are
// the exception: they are appended, so every layer's rules apply.
func mergeKeys(dst, src *Config, md *toml.MetaData, file string) {
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	t := dv.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := tomlName(f)
		if name == "" {
			continue
		}
		switch {
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
		case f.Type.Kind() == reflect.Struct:
			for j := 0; j < f.Type.NumField(); j++ {
				sub := tomlName(f.Type.Field(j))
				if sub == "" || !md.IsDefined(name, sub) {
					continue
				}
				d, s := dv.Field(i).Field(j), sv.Field(i).Field(j)
				if name == "permissions" && (sub == "allow" || sub == "ask" || sub == "deny") || name == "sandbox" && sub == "forbid_read" {
					// Rule lists and forbid_read accumulate across files: a
					// project file must not silently drop the user's deny
					// rules or hidden paths.
					d.Set(reflect.AppendSlice(d, s))
				} else {
					d.Set(s)
				}
				dst.origins[name+"."+sub] = file
			}
		default:
			if md.IsDefined(name) {
				dv.Field(i).Set(sv.Field(i))
				dst.origins[name] = file
			}
		}
	}
}

func tomlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// mergeEntries merges one file's entries into dst: an entry replaces the
// one of the same name as a whole (so a project entry never half-inherits,
// say, a user entry's api_key_env); new names are appended in file order.
func mergeEntries[T any](p *problems, file, kind string, dst, src []T, name func(*T) string) []T {
	seen := map[string]bool{}
	for i := range src {
		n := name(&src[i])
		if n == "" {
			dst = append(dst, src[i])
			continue
		}
		if seen[n] {
			p.add(file, entryLabel(kind, n, i)+".name", "%q is declared twice in this file", n)
			continue
		}
		seen[n] = true
		replaced := false
		for j := range dst {
			if name(&dst[j]) == n {
				dst[j], replaced = src[i], true
				break
			}
		}
		if !replaced {
			dst = append(dst, src[i])
		}
	}
	return dst
}

// finish applies entry defaults, expands ${VAR} in the fields that allow
// it, and resolves relative paths against the file that set them.
func (l *loader) finish(env func(string) (string, bool)) {
	c := l.c
	e := expander{lookup: env, p: &l.p}
	for i := range c.Providers {
		p := &c.Providers[i]
		p.applyDefaults()
		label := entryLabel("providers", p.Name, i)
		l.migrateChatURL(p, label)
		e.str(&p.BaseURL, p.Source, label+".base_url")
		e.str(&p.RequestURL, p.Source, label+".request_url")
	}
	pe := expander{lookup: env, keep: keepWorkspaceVars, p: &l.p}
	for i := range c.Plugins {
		p := &c.Plugins[i]
		p.applyDefaults()
		label := entryLabel("plugins", p.Name, i)
		pe.str(&p.Command, p.Source, label+".command")
		pe.list(p.Args, p.Source, label+".args")
		pe.table(p.Env, p.Source, label+".env")
		pe.str(&p.URL, p.Source, label+".url")
		pe.table(p.Headers, p.Source, label+".headers")
	}
	for i := range c.Workspaces {
		c.Workspaces[i].applyDefaults()
	}
	for i := range c.Schedules {
		c.Schedules[i].applyDefaults()
	}
	for i := range c.Webhooks {
		c.Webhooks[i].applyDefaults()
	}
	s := &c.Sandbox
	e.str(&s.WorkspaceRoot, c.origins["sandbox.workspace_root"], "sandbox.workspace_root")
	s.WorkspaceRoot = resolveFrom(s.WorkspaceRoot, c.origins["sandbox.workspace_root"])
	e.list(s.AllowWrite, c.origins["sandbox.allow_write"], "sandbox.allow_write")
	e.list(s.AllowRead, c.origins["sandbox.allow_read"], "sandbox.allow_read")
	e.list(s.ForbidRead, c.origins["sandbox.forbid_read"], "sandbox.forbid_read")
	e.list(s.AllowSockets, c.origins["sandbox.allow_sockets"], "sandbox.allow_sockets")
	c.Store.Path = resolveFrom(c.Store.Path, c.origins["store.path"])
	c.Skills.finishPaths(c, e, env)
}

// migrateChatURL moves the legacy chat_url of an OpenAI-compatible entry
// to request_url, which means the same there (seed §3.1); request_url wins
// when both are set, and other kinds never had chat_url.
func (l *loader) migrateChatURL(p *Provider, label string) {
	switch {
	case p.ChatURL == "":
		return
	case p.Kind != "openai":
		l.c.warnings = append(l.c.warnings, fmt.Sprintf("%s: %s.chat_url ignored: it only ever applied to kind \"openai\"; use request_url", p.Source, label))
	case p.RequestURL != "":
		l.c.warnings = append(l.c.warnings, fmt.Sprintf("%s: %s.chat_url ignored: request_url is set and wins", p.Source, label))
	default:
		p.RequestURL = p.ChatURL
		l.c.warnings = append(l.c.warnings, fmt.Sprintf("%s: %s.chat_url is the legacy name of request_url; it was used as request_url (rename it)", p.Source, label))
	}
	p.ChatURL = ""
}
