package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"reasonix/internal/ids"
	"reasonix/runner"
	"reasonix/runner/apitype"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apitype.Error{Code: code, Message: msg})
}

// fail maps a service error to a response. A *runner.Error produces a 4xx
// (or 503) with its message, written for the requester; anything else is a
// 500 whose detail goes to the log under a reference id.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code := 0, ""
	var re *runner.Error
	switch {
	case !errors.As(err, &re):
	case errors.Is(re.Kind, runner.ErrInvalid):
		status, code = http.StatusBadRequest, apitype.CodeInvalid
	case errors.Is(re.Kind, runner.ErrNotFound):
		status, code = http.StatusNotFound, apitype.CodeNotFound
	case errors.Is(re.Kind, runner.ErrExpired):
		status, code = http.StatusConflict, apitype.CodeExpired
	case errors.Is(re.Kind, runner.ErrConflict):
		status, code = http.StatusConflict, apitype.CodeConflict
	case errors.Is(re.Kind, runner.ErrUnauthenticated):
		status, code = http.StatusUnauthorized, apitype.CodeUnauthorized
	case errors.Is(re.Kind, runner.ErrForbidden):
		status, code = http.StatusForbidden, apitype.CodeForbidden
	case errors.Is(re.Kind, runner.ErrUnavailable):
		status, code = http.StatusServiceUnavailable, apitype.CodeUnavailable
	}
	if status != 0 {
		writeError(w, status, code, re.Message)
		return
	}
	ref := ids.Hex(4)
	a.log.Error("httpapi: request failed", slog.String("ref", ref), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.Any("err", err))
	writeJSON(w, http.StatusInternalServerError, apitype.Error{Code: apitype.CodeInternal,
		Message: "the request failed; quote the reference when reporting it", Ref: ref})
}

// decode reads a JSON body into v: at most MaxBody bytes, one object, no
// unknown fields. A failure has been answered with a 4xx.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, apitype.CodeUnsupportedMediaType, "send application/json")
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, apitype.CodeTooLarge, fmt.Sprintf("the body exceeds %d bytes", MaxBody))
			return false
		}
		writeError(w, http.StatusBadRequest, apitype.CodeInvalid, "the body could not be read")
		return false
	}
	if err := decodeBody(body, v); err != nil {
		writeError(w, http.StatusBadRequest, apitype.CodeInvalid, err.Error())
		return false
	}
	return true
}

// decodeBody is decode without HTTP, for the fuzz target.
func decodeBody(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return errors.New("the body is empty; send a JSON object")
		case errors.As(err, &syn):
			return fmt.Errorf("the body is not valid JSON (at byte %d)", syn.Offset)
		case errors.As(err, &typ):
			return fmt.Errorf("field %q has the wrong type (want %s)", typ.Field, typ.Type)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return fmt.Errorf("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return errors.New("the body is not a valid JSON object")
	}
	if dec.More() {
		return errors.New("the body holds more than one JSON value")
	}
	var rest json.RawMessage
	if err := dec.Decode(&rest); !errors.Is(err, io.EOF) {
		return errors.New("the body holds more than one JSON value")
	}
	return nil
}
