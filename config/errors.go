package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"reasonix/internal/envexpand"
)

// ErrNoProviders is returned (wrapped) by ResolveModel when no [[providers]]
// entry is configured; callers use it to tell the user what to add.
var ErrNoProviders = errors.New("config: no providers are configured")

// ErrUnsetVariable is returned (wrapped) by Expand for a ${VAR} reference to a
// variable that is not set and has no default. It is the shared grammar's
// error, so errors.Is holds wherever the reference was expanded.
var ErrUnsetVariable = envexpand.ErrUnset

// FileError is a problem reading or decoding one configuration file. Line
// (and Column) is 0 when unknown, Key is "" when the problem is not about
// one key.
type FileError struct {
	File   string
	Line   int
	Column int
	Key    string
	Err    error
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ", column %d", e.Column)
		}
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": key %q", e.Key)
	}
	b.WriteString(": ")
	var pe toml.ParseError
	if errors.As(e.Err, &pe) {
		b.WriteString(pe.Message)
	} else {
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "toml: "))
	}
	return b.String()
}

func (e *FileError) Unwrap() error { return e.Err }

// typeErrorText is the decoder's text for a value of the wrong type.
var typeErrorText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)
})

// decodeError turns a toml error into a *FileError carrying the file and,
// when the decoder knows them, the line and key.
func decodeError(file string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &FileError{File: file, Line: pe.Position.Line, Column: pe.Position.Col, Key: pe.LastKey, Err: err}
	}
	// Type mismatches arrive as plain errors of the form
	// `toml: line N (last key "k"): incompatible types: ...`: read the line
	// and key out of the text, so they read like every other problem.
	if m := typeErrorText().FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FileError{File: file, Line: line, Key: m[2], Err: errors.New(m[3])}
	}
	return &FileError{File: file, Err: err}
}

// problems collects validation errors, one per field, so a person sees all
// of them at once.
type problems struct{ errs []error }

// add records a problem with field, blaming source (a file, a flag, or ""
// for a default value).
func (p *problems) add(source, field, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if source == "" {
		p.errs = append(p.errs, fmt.Errorf("config: %s: %s", field, msg))
		return
	}
	p.errs = append(p.errs, fmt.Errorf("config: %s: %s: %s", source, field, msg))
}

// wrap records err (already describing the problem) about field.
func (p *problems) wrap(source, field string, err error) {
	if source == "" {
		p.errs = append(p.errs, fmt.Errorf("config: %s: %w", field, err))
		return
	}
	p.errs = append(p.errs, fmt.Errorf("config: %s: %s: %w", source, field, err))
}

func (p *problems) err() error { return errors.Join(p.errs...) }
