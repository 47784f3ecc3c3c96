package policy

import (
	"path"
	"strings"

	"reasonix/agent"
)

// scopes suggests the grants a person may choose for the rest of the task:
// for bash the exact command and, for a simple static command, a
// conservative prefix; for file mutations the path and then all edits; for
// other tools the tool.
func (g *Gate) scopes(call agent.Call, f *callFacts, humanOnly bool) []string {
	if call.Tool == "bash" {
		if f.sh == nil || strings.TrimSpace(f.sub.command) == "" {
			return nil
		}
		out := []string{"Bash=" + strings.TrimSpace(f.sub.command)}
		sh := f.sh
		if !humanOnly && !sh.dynamic && sh.nested == "" && !sh.compound && len(sh.parts) == 1 {
			if pre := suggestPrefix(sh.parts[0].words); pre != "" {
				out = append(out, "Bash("+pre+":*)")
			}
		}
		return out
	}
	if editTools[call.Tool] {
		var out []string
		if len(f.sub.paths) == 1 {
			forms := pathForms(f.sub.paths[0], g.workdir)
			p := forms[0]
			if path.IsAbs(p) && len(forms) > 1 {
				p = forms[1] // workspace-relative reads better and survives a moved workspace
			}
			out = append(out, "Edit("+escapeGlob(p)+")")
		}
		return append(out, familyEdit)
	}
	if checkToolName(call.Tool) == nil {
		return []string{call.Tool}
	}
	return nil
}

// subcommandTools are commands whose first argument is conventionally a
// subcommand, so `go test` is a natural prefix and `go` alone would be too
// broad.
var subcommandTools = map[string]bool{
	"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "cargo": true, "docker": true,
	"podman": true, "kubectl": true, "gh": true, "make": true, "pip": true, "pip3": true, "uv": true,
	"poetry": true, "bundle": true, "rake": true, "mvn": true, "gradle": true, "dotnet": true,
	"terraform": true, "helm": true, "bun": true, "composer": true, "mix": true, "swift": true,
	"rustup": true, "brew": true, "apt": true, "apt-get": true, "just": true, "task": true,
}

// noPrefix are commands whose prefix grant would cover arbitrary code.
var noPrefix = map[string]bool{
	"sudo": true, "doas": true, "env": true, "command": true, "builtin": true, "nohup": true,
	"timeout": true, "nice": true, "stdbuf": true, "setsid": true, "time": true, "find": true,
	"npx": true, "awk": true, "gawk": true, "mawk": true, "nawk": true, "sed": true, "ssh": true,
	"node": true, "nodejs": true, "ruby": true, "perl": true, "php": true, "lua": true, "deno": true,
}

// suggestPrefix returns the command name plus a leading subcommand word
// where that is conventional, or "" when no prefix is safe to offer. It
// never includes paths, flags or values.
func suggestPrefix(words []string) string {
	name := words[0]
	base := path.Base(name)
	if noPrefix[base] || shells[base] || alwaysIndirect[base] != "" || strings.HasPrefix(base, "python") || !plainWord(name) {
		return ""
	}
	if subcommandTools[base] && len(words) > 1 && subcommandWord(words[1]) {
		return name + " " + words[1]
	}
	return name
}

func plainWord(w string) bool {
	for _, r := range w {
		ok := r == '_' || r == '-' || r == '.' || r == '/' || r == '+' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !ok {
			return false
		}
	}
	return w != ""
}

func subcommandWord(w string) bool {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for _, r := range w {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z') {
			return false
		}
	}
	return true
}

// escapeGlob quotes glob metacharacters so a path grant covers exactly
// that path.
func escapeGlob(p string) string {
	var sb strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]\`, r) {
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
