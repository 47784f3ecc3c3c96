package main

import "errors"

// problemsOf lists the separate problems err carries: the leaves of its
// errors.Join trees, seen through wrappers that add no words of their own
// (such as configError). A plain error is one problem, however many lines
// it has (an ambiguous id lists its matches below its first line).
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
	return []string{err.Error()}
}
