package policy

import "strings"

func isAwk(name string) bool {
	return name == "awk" || name == "gawk" || name == "mawk" || name == "nawk" || name == "busybox-awk"
}

// awkCall is an awk command line taken apart.
type awkCall struct {
	progs   []string
	unseen  string // why part of the program cannot be read (-f, -i, -l, -E)
	inPlace bool   // gawk -i inplace rewrites the file operands
	outputs bool   // gawk writes a profile, dump or pretty-print file
	files   []string
}

func parseAwk(args []string) awkCall {
	var c awkCall
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func(attached string) string {
			if attached != "" {
				return attached
			}
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
			takes := func() string {
				if hasVal {
					return val
				}
				return value("")
			}
			switch {
			case hasLong([]string{name}, "--source"):
				c.progs = append(c.progs, takes())
			case hasLong([]string{name}, "--file") || hasLong([]string{name}, "--exec"):
				takes()
				c.unseen = "the awk program is read from a file"
			case hasLong([]string{name}, "--include"):
				if takes() == "inplace" {
					c.inPlace = true
				} else {
					c.unseen = "the awk program includes a library file"
				}
			case hasLong([]string{name}, "--load"):
				takes()
				c.unseen = "awk loads a compiled extension"
			case hasLong([]string{name}, "--field-separator") || hasLong([]string{name}, "--assign"):
				takes()
			case hasLong([]string{name}, "--dump-variables") || hasLong([]string{name}, "--profile") || hasLong([]string{name}, "--pretty-print"):
				c.outputs = true
			}
		default:
			switch f, rest := a[1], a[2:]; f {
			case 'F', 'v':
				value(rest)
			case 'f', 'E':
				value(rest)
				c.unseen = "the awk program is read from a file"
			case 'e':
				c.progs = append(c.progs, value(rest))
			case 'i':
				if value(rest) == "inplace" {
					c.inPlace = true
				} else {
					c.unseen = "the awk program includes a library file"
				}
			case 'l':
				value(rest)
				c.unseen = "awk loads a compiled extension"
			case 'o', 'p', 'd':
				c.outputs = true
			case 'W':
				// mawk's -W exec FILE and gawk's compatibility forms name
				// program files and options alike.
				value(rest)
				c.unseen = "the awk -W option may name a program file"
			}
		}
	}
	if len(c.progs) == 0 && c.unseen == "" && len(operands) > 0 {
		c.progs, operands = operands[:1], operands[1:]
	}
	for _, o := range operands {
		if k, _, ok := strings.Cut(o, "="); ok && k != "" && !strings.ContainsAny(k, "/.") {
			continue // var=value assigns, it names no file
		}
		c.files = append(c.files, o)
	}
	return c
}

// awkRuns reports an awk command line that runs commands or whose program
// cannot be read.
func awkRuns(args []string) string {
	c := parseAwk(args)
	if c.unseen != "" {
		return c.unseen + ", which may run commands"
	}
	for _, p := range c.progs {
		if scanAwk(p).runs {
			return "the awk program runs commands (system(), a pipe or getline from a command)"
		}
	}
	return ""
}

// awkProgram is what an awk program does beyond printing.
type awkProgram struct {
	runs      bool // system(), `cmd | getline`, `print | cmd`, |&, @load
	redirects bool // print > file, print >> file
}

// scanAwk tokenizes an awk program just enough to find its pipes, calls of
// system() and output redirections, skipping strings, regex literals and
// comments.
func scanAwk(s string) awkProgram {
	var p awkProgram
	operand := false // the previous token ends an operand, so '/' divides
	inPrint, printDepth, depth := false, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			operand = true
		case c == '/' && !operand:
			for i++; i < len(s) && s[i] != '/' && s[i] != '\n'; i++ {
				if s[i] == '\\' {
					i++
				} else if s[i] == '[' {
					// A bracket expression may hold '/'.
					for i++; i < len(s) && s[i] != ']' && s[i] != '\n'; i++ {
					}
				}
			}
			operand = true
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			inPrint, operand = false, false
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			word := s[i:j]
			i = j - 1
			switch word {
			case "print", "printf":
				inPrint, printDepth, operand = true, depth, false
			case "system":
				p.runs = true
			case "return", "in", "case", "if", "while", "for", "do", "else":
				operand = false
			default:
				operand = true
			}
		case c >= '0' && c <= '9' || c == '.':
			operand = true
		case c == ')' || c == ']':
			depth--
			operand = true
		case c == '(' || c == '[':
			depth++
			operand = false
		case c == '|':
			if i+1 < len(s) && s[i+1] == '|' {
				i++
			} else {
				p.runs = true
			}
			operand = false
		case c == '>':
			if inPrint && depth == printDepth {
				p.redirects = true
			}
			operand = false
		case c == '@':
			p.runs = true // @load and @include bring in code from elsewhere
		case c == ';' || c == '\n' || c == '{' || c == '}':
			inPrint, operand = false, false
		case c == ' ' || c == '\t' || c == '\\':
		case c == '$':
			operand = false
		default:
			operand = false
		}
	}
	return p
}
