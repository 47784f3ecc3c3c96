package main

import (
	"errors"
	"flag"
	"strings"

	"reasonix/policy"
)

// parseInterspersed parses flags that may appear before, between or after
// positional arguments ("reasonix run fix it --auto"), which the flag
// package alone does not allow. "--" ends flag parsing.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// fs.Parse stops at the first non-flag or right after "--".
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// postureValue is a --posture flag: the value is parsed at the flag edge by
// policy.ParsePosture, so a typo is a usage error before anything starts,
// and stored as the posture's name.
type postureValue struct{ name *string }

func (v postureValue) String() string {
	if v.name == nil {
		return ""
	}
	return *v.name
}

func (v postureValue) Set(s string) error {
	p, err := policy.ParsePosture(strings.ToLower(strings.TrimSpace(s)))
	if err != nil {
		return errPostureValue
	}
	*v.name = string(p)
	return nil
}

// errPostureValue reads well after the flag package's "invalid value "x"
// for flag --posture: ".
var errPostureValue = errors.New("want ask, auto or yolo")

// deprecatedFlag records that an old flag spelling was used, so the command
// can say so once its flags are parsed.
type deprecatedFlag struct {
	flag.Value
	used bool
}

func (d *deprecatedFlag) Set(s string) error {
	d.used = true
	return d.Value.Set(s)
}
