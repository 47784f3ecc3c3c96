package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one entry of the command tree. Help, shell completion and
// dispatch all read the same table (commands.go), so a command's synopsis,
// flags and behaviour cannot drift apart.
type command struct {
	name    string
	args    string // positional arguments for the synopsis: "ID", "TASK...", "[SHELL]"
	summary string // one line, shown in the parent's list
	about   string // what the command does, for its own help
	example string // one or more example command lines
	// flags registers the command's own flags on fs and returns what runs
	// the command with its positional arguments. nil for a group.
	flags func(fs *flag.FlagSet) action
	subs  []*command // a group's subcommands
}

// action runs a command after its flags are parsed.
type action func(args []string, stdout, stderr io.Writer) error

// sub finds a subcommand by name.
func (c *command) sub(name string) *command {
	for _, s := range c.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

func (c *command) subNames() []string {
	names := make([]string, len(c.subs))
	for i, s := range c.subs {
		names[i] = s.name
	}
	return names
}

// newFlagSet builds the command's flag set. The flag package's own printing
// is silenced: errors and help are written by dispatch, with --flag forms.
func (c *command) newFlagSet(path string) (*flag.FlagSet, action) {
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var act action
	if c.flags != nil {
		act = c.flags(fs)
	}
	return fs, act
}

// commandError ties a usage error to the command it concerns, so the hint
// names that command's help.
type commandError struct {
	path string
	err  error
}

func (e *commandError) Error() string { return e.err.Error() }
func (e *commandError) Unwrap() error { return e.err }

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// dispatch walks args down the tree from root and runs the command found.
// It returns the error to report; errHelpShown means help was printed.
func dispatch(root *command, args []string, stdout, stderr io.Writer) error {
	c, path := root, []string{}
	for len(c.subs) > 0 {
		if len(args) == 0 {
			printHelp(stderr, c, path)
			if len(path) == 0 {
				return &exitError{code: exitUsage}
			}
			return &commandError{strings.Join(path, " "), usageErrorf("%s needs a command: %s", strings.Join(path, " "), strings.Join(c.subNames(), ", "))}
		}
		if isHelp(args[0]) {
			printHelp(stdout, c, path)
			return errHelpShown
		}
		next := c.sub(args[0])
		if next == nil {
			return unknownCommand(c, path, args[0])
		}
		c, path, args = next, append(path, next.name), args[1:]
	}
	name := strings.Join(path, " ")
	fs, act := c.newFlagSet(name)
	rest, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, c, path)
		return errHelpShown
	}
	if err != nil {
		return &commandError{name, usageErrorf("%s: %s", name, flagError(err, fs))}
	}
	if err := checkArity(name, c, rest); err != nil {
		return &commandError{name, err}
	}
	if err := act(rest, stdout, stderr); err != nil {
		var ue *usageError
		var ce *commandError
		if errors.As(err, &ue) && !errors.As(err, &ce) {
			return &commandError{name, err}
		}
		return err
	}
	return nil
}

// unknownCommand is the error for a name c does not have, with the nearest
// known name when one is close.
func unknownCommand(c *command, path []string, name string) error {
	what, hint := "command", "help"
	if len(path) > 0 {
		what = strings.Join(path, " ") + " command"
		hint = strings.Join(path, " ")
	}
	msg := fmt.Sprintf("unknown %s %q", what, name)
	if near := nearest(name, c.subNames()); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	} else {
		msg += " (" + strings.Join(c.subNames(), ", ") + ")"
	}
	if hint == "help" {
		hint = ""
	}
	return &commandError{hint, usageErrorf("%s", msg)}
}

// flagError rewrites the flag package's messages with the --flag spelling
// the help and docs use, and suggests the nearest flag for an unknown one.
func flagError(err error, fs *flag.FlagSet) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		msg = fmt.Sprintf("unknown flag --%s", name)
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if near := nearest(name, names); near != "" {
			msg += fmt.Sprintf("; did you mean --%s?", near)
		}
		return msg
	}
	for _, p := range []string{"flag -", "for -", "argument: -"} {
		msg = strings.Replace(msg, p, p+"-", 1)
	}
	return msg
}

// checkArity compares the positional arguments with the synopsis: a word
// ending in "..." takes one or more, a [bracketed] word is optional.
func checkArity(name string, c *command, args []string) error {
	synopsis := c.args
	lo, hi := 0, 0
	for _, w := range strings.Fields(synopsis) {
		optional := strings.HasPrefix(w, "[")
		if !optional {
			lo++
		}
		if strings.HasSuffix(strings.TrimSuffix(w, "]"), "...") {
			hi = -1
		} else if hi >= 0 {
			hi++
		}
	}
	switch {
	case len(args) < lo:
		example, _, _ := strings.Cut(c.example, "\n")
		return usageErrorf("%s needs %s, e.g. %s", name, synopsis, example)
	case hi >= 0 && len(args) > hi && hi == 0:
		return usageErrorf("%s takes no arguments, got %q", name, args[0])
	case hi >= 0 && len(args) > hi:
		return usageErrorf("%s takes %s, got %d arguments", name, synopsis, len(args))
	}
	return nil
}
