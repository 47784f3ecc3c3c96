package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// TrustFile, in the Reasonix home, lists the project directories whose own
// reasonix.toml and .mcp.json `reasonix run` obeys in full. Only
// `reasonix trust` writes it; a project file can never trust itself.
const TrustFile = "trusted.toml"

// ErrUntrusted is wrapped by the error Load returns when an untrusted
// project file sets a key that would loosen the policy or start a process.
var ErrUntrusted = errors.New("the directory is not trusted")

// trustDoc is the content of TrustFile.
type trustDoc struct {
	Dirs []string `toml:"dirs"`
}

// HomeDir is the Reasonix home Load uses by default ($REASONIX_HOME, else
// ~/.reasonix); "" when no home directory is known.
func HomeDir() (string, error) { return reasonixHome(LoadOptions{}, os.LookupEnv) }

// TrustedDirs lists the trusted project directories recorded in home.
func TrustedDirs(home string) ([]string, error) {
	data, found, err := readFile(filepath.Join(home, TrustFile))
	if !found || err != nil {
		return nil, err
	}
	var doc trustDoc
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, decodeError(filepath.Join(home, TrustFile), err)
	}
	return doc.Dirs, nil
}

// Trust records dir (made absolute and symlink-free) as trusted in home.
func Trust(home, dir string) (string, error) {
	abs, err := canonicalDir(dir)
	if err != nil {
		return "", err
	}
	dirs, err := TrustedDirs(home)
	if err != nil {
		return "", err
	}
	if slices.Contains(dirs, abs) {
		return abs, nil
	}
	var b bytes.Buffer
	b.WriteString("# Written by `reasonix trust`: project directories whose own reasonix.toml and\n# .mcp.json are obeyed in full.\n")
	if err := toml.NewEncoder(&b).Encode(trustDoc{Dirs: append(dirs, abs)}); err != nil {
		return "", err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	tmp := filepath.Join(home, TrustFile+".tmp")
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(home, TrustFile)); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	return abs, nil
}

func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("config: %s is not a directory", dir)
	}
	return abs, nil
}

// TrustRule is what an untrusted project file may do with one key.
type TrustRule int

const (
	// Refused keys would loosen the configuration (allow rules, the
	// sandbox's mode, service settings): setting one is an error wrapping
	// ErrUntrusted until the directory is trusted.
	Refused TrustRule = iota
	// Tightens keys add rules, hide paths or change only what the model is
	// told; they apply as written.
	Tightens
	// Stricter keys apply only when they move toward the stricter value
	// (a lower limit, a lower posture, network off, fewer tools); a looser
	// value is refused.
	Stricter
	// Ignored keys name a file, a command, a URL or an environment
	// variable: they are left out, with a warning, until the directory is
	// trusted, because reading, running or reaching what they name is the
	// owner's decision, not the checkout's.
	Ignored
)

func (r TrustRule) String() string {
	switch r {
	case Tightens:
		return "tightens"
	case Stricter:
		return "stricter"
	case Ignored:
		return "ignored"
	}
	return "refused"
}

// untrustedRules classifies keys by dotted path; a key takes the rule of
// its longest listed prefix (whole segments), and an unlisted key is
// Refused. config/trust_test.go lists every key the structs have, so a new
// key fails the test until someone decides its rule.
var untrustedRules = map[string]TrustRule{
	"agent.system_prompt":               Tightens,
	"agent.system_prompt_file":          Ignored,
	"agent.temperature":                 Tightens,
	"agent.compact_ratio":               Tightens,
	"agent.subagent_model":              Tightens,
	"agent.subagent_models":             Tightens,
	"agent.subagent_effort":             Tightens,
	"agent.subagent_efforts":            Tightens,
	"agent.planner_model":               Tightens,
	"agent.planner_effort":              Tightens,
	"agent.max_steps":                   Stricter,
	"agent.goal_token_budget":           Stricter,
	"agent.goal_max_turns":              Stricter,
	"agent.goal_wall_clock":             Stricter,
	"agent.goal_budget_usd":             Stricter,
	"agent.max_subagent_concurrency":    Stricter,
	"agent.max_parallel_writers":        Stricter,
	"agent.max_subagent_depth":          Stricter,
	"tools.enabled":                     Stricter,
	"tools.bash_timeout_seconds":        Stricter,
	"tools.mcp_startup_timeout_seconds": Stricter,
	"tools.mcp_call_timeout_seconds":    Stricter,
	"tools.shell":                       Ignored, // pass_env, env: variables
	"tools.protect_changed_files":       Stricter,
	"permissions.deny":                  Tightens,
	"permissions.ask":                   Tightens,
	"permissions.posture":               Stricter,
	"permissions.mode":                  Stricter,
	"sandbox.forbid_read":               Tightens,
	"sandbox.network":                   Stricter,
	"sandbox.workspace_root":            Ignored,
	"sandbox.allow_write":               Ignored,
	"sandbox.allow_read":                Ignored,
	"sandbox.allow_sockets":             Ignored,
	"providers":                         Ignored, // base_url, api_key_env
	"plugins":                           Ignored, // command, url, env
	"workspaces":                        Ignored, // repo, setup, publish (a token variable, a push URL), allow_reviewers (who steers its pull requests)
	"schedules":                         Ignored, // command, workspace
	"webhooks":                          Ignored, // secret_env, command
	"store.path":                        Ignored,
	"store.dsn_env":                     Ignored,
	"serve.api_token_env":               Ignored,
	"serve.public_url":                  Ignored,
	"bot.slack.bot_token_env":           Ignored,
	"bot.slack.app_token_env":           Ignored,
	"bot.slack.signing_secret_env":      Ignored,
	"bot.slack.api_url":                 Ignored,
	"bot.telegram.token_env":            Ignored,
	"bot.telegram.webhook_secret_env":   Ignored,
	"bot.telegram.api_endpoint":         Ignored,
	// A checkout may hide skills; which directories are read is the owner's.
	"skills.paths":             Ignored,
	"skills.excluded_paths":    Tightens,
	"skills.disabled_skills":   Tightens,
	"skills.suppress_warnings": Tightens,
}

// UntrustedRule is the rule for key (a dotted path such as
// "agent.max_steps" or "providers.base_url").
func UntrustedRule(key string) TrustRule {
	for k := key; ; {
		if r, ok := untrustedRules[k]; ok {
			return r
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			return Refused
		}
		k = k[:i]
	}
}

// untrustedProblems sorts the keys an untrusted project file sets: bad
// would loosen the configuration below it (in l.c); ignored name a file,
// command, URL or variable and are to be left out.
func (l *loader) untrustedProblems(fc *Config, md *toml.MetaData, seedCovered map[string]bool) (bad, ignored []string) {
	for _, k := range md.Keys() {
		key := k.String()
		if seedCovered[key] {
			continue // has no effect here (seedkeys.go)
		}
		if t := md.Type(k...); t == "Hash" || t == "ArrayHash" {
			if UntrustedRule(key) != Ignored {
				continue // a table is judged by the keys inside it
			}
		}
		switch UntrustedRule(key) {
		case Tightens:
		case Ignored:
			top := ignoredRoot(key)
			if !slices.Contains(ignored, top) {
				ignored = append(ignored, top)
			}
		case Stricter:
			if !stricter(key, fc, l.c) {
				bad = append(bad, key)
			}
		default:
			bad = append(bad, key)
		}
	}
	return bad, ignored
}

// ignoredRoot is the unit an ignored key is left out by: a whole array of
// tables (an entry without its URL or command makes no sense), else the
// listed key itself.
func ignoredRoot(key string) string {
	for k := key; ; {
		if _, ok := untrustedRules[k]; ok {
			return k
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			return key
		}
		k = k[:i]
	}
}

// stricter reports whether the project's value of a Stricter key is at
// least as strict as the value below it.
func stricter(key string, fc, below *Config) bool {
	switch key {
	case "permissions.posture":
		return fc.Permissions.Posture.Rank() <= below.Permissions.Posture.Rank()
	case "permissions.mode":
		return modeRank(fc.Permissions.Mode) <= modeRank(below.Permissions.Mode)
	case "sandbox.network":
		return !fc.Sandbox.Network
	case "tools.protect_changed_files":
		return fc.Tools.ProtectsChangedFiles()
	case "tools.enabled":
		// Empty means every built-in: only a subset of a list is stricter.
		return len(fc.Tools.Enabled) > 0 && (len(below.Tools.Enabled) == 0 ||
			!slices.ContainsFunc(fc.Tools.Enabled, func(t string) bool { return !slices.Contains(below.Tools.Enabled, t) }))
	}
	// A limit: a positive value no higher than the one below; 0 (off) is
	// only stricter than nothing.
	v, b := limitValue(fc, key), limitValue(below, key)
	return v == b || v > 0 && (b == 0 || v <= b)
}

// limitValue reads a numeric key of c as a float64 (0 when not numeric).
func limitValue(c *Config, key string) float64 {
	v := reflect.ValueOf(c).Elem()
	for _, seg := range strings.Split(key, ".") {
		if v.Kind() != reflect.Struct {
			return 0
		}
		f, ok := fieldByTOML(v, seg)
		if !ok {
			return 0
		}
		v = f
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		return float64(v.Int())
	case reflect.Float64:
		return v.Float()
	}
	return 0
}

func fieldByTOML(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if tomlName(t.Field(i)) == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// leaveOut makes fc carry, for each ignored key, the value below it (in
// below), so merging fc changes nothing there; an ignored array of tables
// is emptied.
func leaveOut(fc, below *Config, ignored []string) {
	for _, key := range ignored {
		dst, src := reflect.ValueOf(fc).Elem(), reflect.ValueOf(below).Elem()
		segs := strings.Split(key, ".")
		for i, seg := range segs {
			d, ok := fieldByTOML(dst, seg)
			s, _ := fieldByTOML(src, seg)
			if !ok {
				break
			}
			if i == len(segs)-1 || d.Kind() != reflect.Struct {
				if d.Kind() == reflect.Slice && d.Type().Elem().Kind() == reflect.Struct {
					d.Set(reflect.Zero(d.Type()))
				} else {
					d.Set(s)
				}
				break
			}
			dst, src = d, s
		}
	}
}

// modeRank orders [permissions] mode by what it lets writers do unasked.
func modeRank(m string) int {
	switch m {
	case ModeDeny:
		return 0
	case ModeAllow:
		return 2
	}
	return 1 // ask, and the default
}

func untrustedError(path, what, dir string) error {
	return &FileError{File: path, Err: fmt.Errorf("%s, and %w; trust it with `reasonix trust %s` (or pass --trust for one run)",
		what, ErrUntrusted, dir)}
}

// untrustedDir is dir when the trust file of home does not list it, else "".
func untrustedDir(home, dir string) (string, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if home == "" {
		return dir, nil
	}
	dirs, err := TrustedDirs(home)
	if err != nil {
		return "", err
	}
	if slices.Contains(dirs, dir) {
		return "", nil
	}
	return dir, nil
}

// quoteKeys names keys for a message, outermost first, each once.
func quoteKeys(keys []string) string {
	var out []string
	for _, k := range keys {
		if !slices.ContainsFunc(out, func(o string) bool { return strings.HasPrefix(k, strings.Trim(o, `"`)+".") }) {
			out = append(out, fmt.Sprintf("%q", k))
		}
	}
	if len(out) == 1 {
		return "key " + out[0]
	}
	return "keys " + strings.Join(out, ", ")
}

func nameVerb(n int) string {
	if n == 1 {
		return "it names"
	}
	return "they name"
}

// confinePromptFile checks a system_prompt_file a project's own file names
// (trusted or not): it must stay inside the project directory once
// symlinks and ".." are resolved, must not start with "~" (which Load
// never expands, and which reads like a home directory), and must not be
// a forbid_read path, so a checkout cannot feed the model a key from the
// home directory by naming it.
func confinePromptFile(raw, file, projectDir string, forbid []string) error {
	if strings.HasPrefix(raw, "~") {
		return errors.New("must be a path inside the project, not under \"~\"")
	}
	root := projectDir
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	real := file
	if r, err := filepath.EvalSymlinks(file); err == nil {
		real = r
	}
	if !within(root, real) {
		return fmt.Errorf("%s is outside the project directory %s", file, projectDir)
	}
	for _, f := range forbid {
		if f == "" {
			continue
		}
		if r, err := filepath.EvalSymlinks(f); err == nil {
			f = r
		}
		if within(f, real) {
			return fmt.Errorf("%s is hidden by [sandbox] forbid_read (%s)", file, f)
		}
	}
	return nil
}

// within reports whether path is dir or below it; both are clean absolute
// paths.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
