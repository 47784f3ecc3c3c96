package recipe

import (
	"strings"
)

// A template is a command body cut once, at load, into literal text and
// placeholders, so rendering is a single pass into one allocation.
type template struct {
	parts []part
	// lit is the total length of the literal parts.
	lit int
}

// part is literal text (arg == argNone), every argument (argAll) or
// one positional argument (arg >= 1).
type part struct {
	text string
	arg  int
}

const (
	argNone = 0
	argAll  = -1
)

// maxPositional bounds $N: a digit run longer than this is literal text,
// which also keeps the number from overflowing.
const maxPositional = 99

// parseTemplate reads $ARGUMENTS, $1…$N and $$ (a literal $). Any other
// $ is literal, so a body that talks about shell variables ($HOME) needs
// no escaping.
func parseTemplate(body string) template {
	var t template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{text: lit.String()})
			t.lit += lit.Len()
			lit.Reset()
		}
	}
	for i := 0; i < len(body); {
		c := body[i]
		if c != '$' || i+1 == len(body) {
			lit.WriteByte(c)
			i++
			continue
		}
		next := body[i+1]
		switch {
		case next == '$':
			lit.WriteByte('$')
			i += 2
		case strings.HasPrefix(body[i+1:], "ARGUMENTS"):
			flush()
			t.parts = append(t.parts, part{arg: argAll})
			i += 1 + len("ARGUMENTS")
		case next >= '1' && next <= '9':
			j, n := i+1, 0
			for j < len(body) && body[j] >= '0' && body[j] <= '9' && n <= maxPositional {
				n = n*10 + int(body[j]-'0')
				j++
			}
			if n > maxPositional {
				lit.WriteString(body[i:j])
				i = j
				continue
			}
			flush()
			t.parts = append(t.parts, part{arg: n})
			i = j
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return t
}

// render fills the placeholders: $ARGUMENTS is args joined by single
// spaces, $N the Nth argument or nothing when there are fewer.
func (t *template) render(args []string) string {
	all := 0
	for i, a := range args {
		if i > 0 {
			all++
		}
		all += len(a)
	}
	size := t.lit
	for _, p := range t.parts {
		switch {
		case p.arg == argAll:
			size += all
		case p.arg > 0 && p.arg <= len(args):
			size += len(args[p.arg-1])
		}
	}
	var b strings.Builder
	b.Grow(size)
	for _, p := range t.parts {
		switch {
		case p.arg == argNone:
			b.WriteString(p.text)
		case p.arg == argAll:
			for i, a := range args {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(a)
			}
		case p.arg <= len(args):
			b.WriteString(args[p.arg-1])
		}
	}
	return b.String()
}

// usesArgs reports whether the template has any argument placeholder.
func (t *template) usesArgs() bool {
	for _, p := range t.parts {
		if p.arg != argNone {
			return true
		}
	}
	return false
}
