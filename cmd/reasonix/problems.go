package main

import (
	"errors"
	"strings"
)

// problemsOf lists the separate problems err carries: the leaves of its
// errors.Join trees, one line each (a leaf of several lines becomes several
// problems), seen through wrappers that add no words of their own (such as
// configError). A plain error is one problem.
func problemsOf(err error) []string {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, problemsOf(e)...)
		}
		return out
	}
	if inner := errors.Unwrap(err); inner != nil && inner.Error() == err.Error() {
		return problemsOf(inner)
	}
	var out []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}
