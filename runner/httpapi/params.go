package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"reasonix/runner/apitype"
)

// intParam reads the query parameter name as a number from lo to hi (no
// upper bound when hi is 0), def when it is absent. A bad value is answered
// 400 with the bounds, and ok is false.
func intParam(w http.ResponseWriter, r *http.Request, name string, lo, hi, def int) (n int, ok bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, true
	}
	top, want := hi, fmt.Sprintf("%s must be %d..%d", name, lo, hi)
	if hi == 0 {
		top, want = math.MaxInt, fmt.Sprintf("%s must be a number of at least %d", name, lo)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > top {
		writeError(w, http.StatusBadRequest, apitype.CodeInvalid, want)
		return 0, false
	}
	return n, true
}

// boolParam reads the query parameter name as true or false, false when
// it is absent. Anything else is answered 400, and ok is false.
func boolParam(w http.ResponseWriter, r *http.Request, name string) (v, ok bool) {
	switch r.URL.Query().Get(name) {
	case "", "false":
		return false, true
	case "true":
		return true, true
	}
	writeError(w, http.StatusBadRequest, apitype.CodeInvalid, name+" must be true or false")
	return false, false
}
