package policy

import (
	"strconv"
	"strings"
)

// What deny rules cannot see.
//
// A Bash deny rule is matched against every command the analyser can read
// (matchFacts). Two kinds of command hide what they run:
//
//   - dynName: a command nobody can name before it runs (a computed name,
//     eval of a computed string, a shell reading a pipe or a process
//     substitution, xargs running its input). While a Bash deny rule naming
//     a command exists, such a call is denied in every posture.
//   - opaque: a known command running code the analyser cannot read: an
//     interpreter's inline program (python -c, perl -e, node -e), awk's
//     system() and pipes, sed's e, tar's exec actions, git -c, git config
//     setting a key that names a command, a git subcommand that may be an
//     alias, a variable naming commands or code (PATH, BASH_ENV,
//     GIT_SSH_COMMAND, GIT_CONFIG_*, LD_PRELOAD, …), hash -p, a workspace
//     program or script that cannot be identified before the call (see
//     resolveFiles). While a Bash deny rule naming a command exists, such
//     a call needs a person: no posture, grant of a prefix or
//     allow_dynamic_bash lets it through alone, and under yolo, where
//     nobody is asked, it is refused (deny_rule) naming the deny rules.
//     Only an exact allow rule or an exact grant (a person read it) covers
//     it.
//
// Everything else the analyser reads: `sh -c` and `eval` of literal
// strings, the commands xargs, find -exec and runners start, aliases,
// shell functions and substitutions are parsed and matched like any other
// command.

// bashDenyText names the Bash deny rules that name commands, for reasons:
// "the deny rule `Bash(rm:*)`" or "the deny rules `A`, `B` and 2 more".
func (p *Policy) bashDenyText() string {
	var names []string
	for _, r := range p.deny.rules {
		if r.family == familyBash && r.kind != kindBare {
			names = append(names, "`"+r.String()+"`")
		}
	}
	switch {
	case len(names) == 1:
		return "the deny rule " + names[0]
	case len(names) <= 3:
		return "the deny rules " + strings.Join(names, ", ")
	}
	return "the deny rules " + strings.Join(names[:2], ", ") + " and " + strconv.Itoa(len(names)-2) + " more"
}

// unseenDecision decides a bash call whose commands deny rules cannot all
// see, once no deny rule matched it; ok is false when it is not such a
// call or no Bash deny rule names a command.
func (p *Policy) unseenDecision(f *callFacts) (ev Evaluation, ok bool) {
	if f.sh == nil || f.sh.dynName == "" && f.sh.opaque == "" || !p.deny.hasBashWords() {
		return ev, false
	}
	rules := p.bashDenyText()
	if f.sh.dynName != "" {
		// Deny rules must win; a command nobody can read might be anything
		// they name, so it is refused whatever the posture.
		ev.Decision = Deny
		ev.Reason = f.sh.dynName + ", so " + rules + " cannot be checked against it; write the command out literally"
		return ev, true
	}
	if _, exact := p.allow.exact[strings.TrimSpace(f.sub.command)]; exact {
		return ev, false
	}
	ev.Reason = f.sh.opaque + ", and " + rules + " cannot see what that runs"
	if p.mode == Deny {
		ev.Decision = Deny
		return ev, true
	}
	ev.Decision, ev.HumanOnly, ev.DenyUnseen = Ask, true, rules
	ev.Reason += ", so only a person may approve it"
	return ev, true
}
