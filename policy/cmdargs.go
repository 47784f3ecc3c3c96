package policy

import "strings"

// cmdArgs is a GNU-style command line split into options and operands.
type cmdArgs struct {
	ops  []string
	opts []cmdOpt
}

type cmdOpt struct{ name, value string }

// splitArgs separates options from operands. valued lists the short
// options taking a value, longValued the long ones (abbreviations count).
// An unknown option that takes a value would leave its value among the
// operands, which only adds paths to check.
func splitArgs(args []string, valued string, longValued ...string) cmdArgs {
	var c cmdArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			c.ops = append(c.ops, args[i+1:]...)
			return c
		case a == "-" || !strings.HasPrefix(a, "-"):
			c.ops = append(c.ops, a)
		case strings.HasPrefix(a, "--"):
			name, val, has := strings.Cut(a, "=")
			for _, l := range longValued {
				if !has && hasLong([]string{name}, l) && i+1 < len(args) {
					i++
					val = args[i]
					break
				}
			}
			c.opts = append(c.opts, cmdOpt{name, val})
		default:
			for k := 1; k < len(a); k++ {
				if strings.IndexByte(valued, a[k]) < 0 {
					c.opts = append(c.opts, cmdOpt{"-" + a[k:k+1], ""})
					continue
				}
				v := a[k+1:]
				if v == "" && i+1 < len(args) {
					i++
					v = args[i]
				}
				c.opts = append(c.opts, cmdOpt{"-" + a[k:k+1], v})
				break
			}
		}
	}
	return c
}

// values returns the values of the options named short or long (long may
// be abbreviated on the command line).
func (c cmdArgs) values(short, long string) []string {
	var out []string
	for _, o := range c.opts {
		if short != "" && o.name == short || long != "" && strings.HasPrefix(o.name, "--") && hasLong([]string{o.name}, long) {
			out = append(out, o.value)
		}
	}
	return out
}

func (c cmdArgs) has(short, long string) bool { return len(c.values(short, long)) > 0 }
