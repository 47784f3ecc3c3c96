package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// helpCommand is `reasonix help [COMMAND [SUBCOMMAND]]`.
func helpCommand(root *command, args []string, stdout io.Writer) error {
	c, path := root, []string{}
	for _, name := range args {
		next := c.sub(name)
		if next == nil {
			return unknownCommand(c, path, name)
		}
		c, path = next, append(path, name)
	}
	printHelp(stdout, c, path)
	return nil
}

// printHelp writes c's help: synopsis, description, subcommands or own
// flags, and an example.
func printHelp(w io.Writer, c *command, path []string) {
	name := strings.Join(append([]string{"reasonix"}, path...), " ")
	if len(path) == 0 {
		fmt.Fprintf(w, "%s\n\nUsage:\n  reasonix COMMAND [flags] [ARGS]\n", c.about)
	} else {
		fmt.Fprintf(w, "Usage:\n  %s\n", synopsis(name, c))
		if c.about != "" {
			fmt.Fprintf(w, "\n%s\n", c.about)
		}
	}
	if len(c.subs) > 0 {
		fmt.Fprintln(w, "\nCommands:")
		tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
		for _, s := range c.subs {
			left, right := strings.TrimSpace(s.name+" "+s.args), s.summary
			if len(s.subs) > 0 {
				right += ": " + strings.Join(s.subNames(), ", ")
			}
			fmt.Fprintf(tw, "  %s\t%s\n", left, right)
		}
		tw.Flush()
	} else if fs, _ := c.newFlagSet(name); hasFlags(fs) {
		fmt.Fprintln(w, "\nFlags:")
		printFlags(w, fs)
	}
	if c.example != "" {
		fmt.Fprintln(w, "\nExamples:")
		for line := range strings.SplitSeq(strings.TrimSpace(c.example), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	switch {
	case len(path) == 0:
		fmt.Fprint(w, "\nRun \"reasonix help COMMAND\" (or \"reasonix COMMAND --help\") for a command's arguments, flags and examples.\n")
	case len(c.subs) > 0:
		fmt.Fprintf(w, "\nRun \"%s COMMAND --help\" for a command's arguments, flags and an example.\n", name)
	}
}

// synopsis is the usage line of c under its full name.
func synopsis(name string, c *command) string {
	if len(c.subs) > 0 {
		return name + " COMMAND [flags] [ARGS]"
	}
	s := name
	if fs, _ := c.newFlagSet(name); hasFlags(fs) {
		s += " [flags]"
	}
	if c.args != "" {
		s += " " + c.args
	}
	return s
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// printFlags lists fs's flags as "--name VALUE  usage", one per line. A
// one-letter flag whose usage reads "short for --long" is shown beside its
// long form instead of on a line of its own.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	short := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if long, ok := strings.CutPrefix(f.Usage, "short for --"); ok && len(f.Name) == 1 {
			short[long] = f.Name
		}
	})
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) == 1 && short[strings.TrimPrefix(f.Usage, "short for --")] == f.Name {
			return
		}
		arg, usage := flag.UnquoteUsage(f)
		left := flagName(f.Name)
		if s, ok := short[f.Name]; ok {
			left += ", " + flagName(s)
		}
		if arg != "" {
			left += " " + metavar(arg)
			// "`ask|auto|yolo`: how …" names the value once, in the left column.
			if rest, ok := strings.CutPrefix(usage, arg+": "); ok {
				usage = rest
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\n", left, usage)
	})
	tw.Flush()
}

// flagName spells a flag as a person types it: --long, -y.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// metavar spells a flag's value in the synopsis: a plain word in capitals
// (FILE, N), a list of choices as written (ask|auto|yolo).
func metavar(arg string) string {
	if strings.ContainsAny(arg, "|,") {
		return arg
	}
	return strings.ToUpper(arg)
}
