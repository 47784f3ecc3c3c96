package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// completionCommand is `reasonix completion bash|zsh|fish`: a script built
// from the command table, so a new command or flag completes without
// touching it.
func completionCommand(root *command, shell string, stdout io.Writer) error {
	switch shell {
	case "bash":
		writeBash(stdout, root)
	case "zsh":
		writeZsh(stdout, root)
	case "fish":
		writeFish(stdout, root)
	default:
		msg := fmt.Sprintf("completion: unknown shell %q (bash, zsh or fish)", shell)
		if near := nearest(shell, []string{"bash", "zsh", "fish"}); near != "" {
			msg = fmt.Sprintf("completion: unknown shell %q; did you mean %q?", shell, near)
		}
		return usageErrorf("%s", msg)
	}
	return nil
}

// leaf is a runnable command with its path and flag names (as typed).
type leaf struct {
	path  []string
	flags []string
	usage map[string]string
}

// leaves lists every runnable command below root, depth first.
func leaves(root *command) []leaf {
	var out []leaf
	var walk func(c *command, path []string)
	walk = func(c *command, path []string) {
		if len(c.subs) > 0 {
			for _, s := range c.subs {
				walk(s, append(slices.Clone(path), s.name))
			}
			return
		}
		fs, _ := c.newFlagSet(strings.Join(path, " "))
		l := leaf{path: path, usage: map[string]string{}}
		fs.VisitAll(func(f *flag.Flag) {
			l.flags = append(l.flags, flagName(f.Name))
			_, l.usage[f.Name] = flag.UnquoteUsage(f)
		})
		out = append(out, l)
	}
	walk(root, nil)
	return out
}

// groups lists every command with subcommands, with its path.
func groups(root *command) map[string][]string {
	out := map[string][]string{"": root.subNames()}
	for _, c := range root.subs {
		if len(c.subs) > 0 {
			out[c.name] = c.subNames()
		}
	}
	return out
}

func writeBash(w io.Writer, root *command) {
	fmt.Fprint(w, `# bash completion for reasonix; load with: source <(reasonix completion bash)
_reasonix() {
    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub=${COMP_WORDS[2]} words=""
    if [[ $cur == -* ]]; then
        case "$cmd $sub" in
`)
	for _, l := range leaves(root) {
		pattern := casePattern(l.path)
		fmt.Fprintf(w, "            %s) words=%q ;;\n", pattern, strings.Join(l.flags, " "))
	}
	fmt.Fprint(w, `        esac
    elif (( COMP_CWORD == 1 )); then
`)
	g := groups(root)
	fmt.Fprintf(w, "        words=%q\n", strings.Join(g[""], " "))
	fmt.Fprint(w, "    elif (( COMP_CWORD == 2 )); then\n        case $cmd in\n")
	for _, c := range root.subs {
		if len(c.subs) > 0 {
			fmt.Fprintf(w, "            %s) words=%q ;;\n", c.name, strings.Join(g[c.name], " "))
		}
	}
	fmt.Fprint(w, `            completion) words="bash zsh fish" ;;
            help) words=`+fmt.Sprintf("%q", strings.Join(g[""], " "))+` ;;
        esac
    fi
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _reasonix reasonix
`)
}

func writeZsh(w io.Writer, root *command) {
	fmt.Fprint(w, `#compdef reasonix
# zsh completion for reasonix; put it on $fpath as _reasonix, or: source <(reasonix completion zsh)
_reasonix() {
    local cur=${words[CURRENT]} cmd=${words[2]} sub=${words[3]}
    local -a cands
    if [[ $cur == -* ]]; then
        case "$cmd $sub" in
`)
	for _, l := range leaves(root) {
		pattern := casePattern(l.path)
		fmt.Fprintf(w, "            %s) cands=(%s) ;;\n", pattern, strings.Join(l.flags, " "))
	}
	g := groups(root)
	fmt.Fprintf(w, "        esac\n    elif (( CURRENT == 2 )); then\n        cands=(%s)\n", strings.Join(g[""], " "))
	fmt.Fprint(w, "    elif (( CURRENT == 3 )); then\n        case $cmd in\n")
	for _, c := range root.subs {
		if len(c.subs) > 0 {
			fmt.Fprintf(w, "            %s) cands=(%s) ;;\n", c.name, strings.Join(g[c.name], " "))
		}
	}
	fmt.Fprintf(w, "            completion) cands=(bash zsh fish) ;;\n            help) cands=(%s) ;;\n", strings.Join(g[""], " "))
	fmt.Fprint(w, `        esac
    fi
    (( ${#cands} )) && compadd -- $cands || _files
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _reasonix "$@"
else
    compdef _reasonix reasonix
fi
`)
}

func writeFish(w io.Writer, root *command) {
	fmt.Fprintln(w, "# fish completion for reasonix; save as ~/.config/fish/completions/reasonix.fish")
	fmt.Fprintln(w, "complete -c reasonix -f")
	for _, c := range root.subs {
		fmt.Fprintf(w, "complete -c reasonix -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
		if len(c.subs) > 0 {
			cond := fmt.Sprintf("__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s", c.name, strings.Join(c.subNames(), " "))
			for _, s := range c.subs {
				fmt.Fprintf(w, "complete -c reasonix -n %s -a %s -d %s\n", fishQuote(cond), s.name, fishQuote(s.summary))
			}
		}
	}
	fmt.Fprintln(w, "complete -c reasonix -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'")
	for _, l := range leaves(root) {
		cond := "__fish_seen_subcommand_from " + l.path[0]
		if len(l.path) > 1 {
			cond += "; and __fish_seen_subcommand_from " + l.path[1]
		}
		for _, f := range l.flags {
			opt := "-l " + strings.TrimPrefix(f, "--")
			if !strings.HasPrefix(f, "--") {
				opt = "-s " + strings.TrimPrefix(f, "-")
			}
			fmt.Fprintf(w, "complete -c reasonix -n %s %s -d %s\n", fishQuote(cond), opt, fishQuote(l.usage[strings.TrimLeft(f, "-")]))
		}
	}
}

// casePattern matches "$cmd $sub" for a command at path in a shell case
// statement; a top-level command matches whatever word follows it.
func casePattern(path []string) string {
	p := strings.Join(path, `\ `)
	if len(path) == 1 {
		p += `\ *`
	}
	return p
}

// fishQuote single-quotes s for fish, where only \ and ' need escaping.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
