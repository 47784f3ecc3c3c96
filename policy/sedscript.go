package policy

import "strings"

// sedCall is a GNU sed command line taken apart: its scripts, whether it
// edits files in place, and its file operands.
type sedCall struct {
	scripts    []string
	scriptFile bool   // -f: the program is in a file nobody has seen
	inPlace    bool   // -i: the operands are rewritten
	suffix     string // -iSUFFIX: backups are written beside (or, with '/', elsewhere)
	sandbox    bool   // --sandbox: GNU sed refuses e, r and w
	files      []string
	bad        string // an option it does not know
}

func parseSed(args []string) sedCall {
	var c sedCall
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case a == "-" || !strings.HasPrefix(a, "-"):
			operands = append(operands, a)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a, "=")
			switch {
			case hasLong([]string{name}, "--expression"):
				if !hasVal {
					val = next()
				}
				c.scripts = append(c.scripts, val)
			case hasLong([]string{name}, "--file"):
				c.scriptFile = true
				if !hasVal {
					next()
				}
			case hasLong([]string{name}, "--in-place"):
				c.inPlace, c.suffix = true, val
			case hasLong([]string{name}, "--line-length"):
				if !hasVal {
					next()
				}
			case hasLong([]string{name}, "--sandbox"):
				c.sandbox = true
			case name == "--quiet" || name == "--silent" || name == "--debug" || name == "--posix" || name == "--follow-symlinks" ||
				name == "--regexp-extended" || name == "--separate" || name == "--unbuffered" || name == "--null-data" ||
				name == "--help" || name == "--version":
			default:
				c.bad = a
			}
		default:
		bundle:
			for k := 1; k < len(a); k++ {
				switch a[k] {
				case 'n', 'E', 'r', 's', 'u', 'z':
				case 'e', 'f', 'l':
					v := a[k+1:]
					if v == "" {
						v = next()
					}
					switch a[k] {
					case 'e':
						c.scripts = append(c.scripts, v)
					case 'f':
						c.scriptFile = true
					}
					break bundle
				case 'i':
					c.inPlace, c.suffix = true, a[k+1:]
					break bundle
				default:
					c.bad = a
					break bundle
				}
			}
		}
	}
	if len(c.scripts) == 0 && !c.scriptFile && len(operands) > 0 {
		c.scripts, operands = operands[:1], operands[1:]
	}
	c.files = operands
	return c
}

// sedRuns reports a sed program that runs commands (the e command, the e
// flag of s) or that nobody has seen (-f).
func sedRuns(args []string) string {
	c := parseSed(args)
	if c.sandbox {
		return ""
	}
	if c.scriptFile {
		return "`sed -f` runs a program from a file, which may execute commands"
	}
	// sed joins its -e scripts with newlines, so `-e 'a\' -e 'e x'` is text.
	p := scanSed(strings.Join(c.scripts, "\n"))
	switch {
	case p.execs:
		return "the sed program executes commands (the e command or flag)"
	case !p.ok:
		return "the sed program could not be read, and sed programs can execute commands"
	}
	return ""
}

// sedProgram is what a sed script does beyond editing its stream.
type sedProgram struct {
	execs  bool     // e command or s///e
	writes []string // files named by w, W and s///w
	ok     bool     // the script was understood to its end
}

// scanSed reads a GNU sed script far enough to find the commands that
// write files or run commands. Anything it does not understand leaves ok
// false, which callers treat as "may do anything".
func scanSed(s string) sedProgram {
	p := sedProgram{ok: true}
	i := 0
	toEOL := func() string {
		start := i
		for i < len(s) && s[i] != '\n' {
			i++
		}
		return strings.TrimSpace(s[start:i])
	}
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// delimited skips a regex or replacement ending at delim; false when
	// it never ends.
	delimited := func(delim byte) bool {
		for i < len(s) {
			c := s[i]
			i++
			switch {
			case c == '\\' && i < len(s):
				i++
			case c == delim:
				return true
			case c == '\n' && delim != '\n':
				return false
			}
		}
		return false
	}
	address := func() bool {
		switch {
		case i < len(s) && s[i] >= '0' && s[i] <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < len(s) && s[i] == '$':
			i++
		case i < len(s) && s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i+1 < len(s) && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	for i < len(s) {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '}' {
			i++
			continue
		}
		if c == '#' {
			toEOL()
			continue
		}
		if !address() {
			p.ok = false
			return p
		}
		skipSpace()
		if i < len(s) && s[i] == ',' {
			i++
			skipSpace()
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				p.ok = false
				return p
			}
		}
		skipSpace()
		for i < len(s) && (s[i] == '!' || s[i] == ' ') {
			i++
		}
		if i >= len(s) {
			p.ok = false // an address without a command
			return p
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			skipSpace()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < len(s) && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case 'a', 'i', 'c':
			// Text to the end of the line; a trailing backslash continues it.
			for i < len(s) {
				if s[i] == '\\' && i+1 < len(s) {
					i += 2
					continue
				}
				if s[i] == '\n' {
					break
				}
				i++
			}
		case 'r', 'R':
			toEOL()
		case 'w', 'W':
			p.writes = append(p.writes, toEOL())
		case 'e':
			p.execs = true
			toEOL()
		case 's', 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				p.ok = false
				return p
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				p.ok = false
				return p
			}
			if cmd == 'y' {
				break
			}
		flags:
			for i < len(s) {
				switch f := s[i]; {
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9':
					i++
				case f == 'e':
					p.execs = true
					i++
				case f == 'w':
					i++
					p.writes = append(p.writes, toEOL())
					break flags
				default:
					break flags
				}
			}
		default:
			p.ok = false
			return p
		}
	}
	return p
}
