package apitype

// Error is the body of every error response. A 5xx carries Ref, the
// reference of the service's log line with the detail.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Ref     string `json:"ref,omitempty"`
}

// The error codes, each with the HTTP status it comes with.
const (
	CodeInvalid              = "invalid"                // 400: bad input; nothing changed
	CodeUnauthorized         = "unauthorized"           // 401: no valid bearer token
	CodeForbidden            = "forbidden"              // 403: the token's role or limits do not allow it
	CodeNotFound             = "not_found"              // 404
	CodeConflict             = "conflict"               // 409: e.g. an approval already decided
	CodeExpired              = "expired"                // 409: an approval that expired
	CodeTooLarge             = "too_large"              // 413: a body over 1 MiB
	CodeUnsupportedMediaType = "unsupported_media_type" // 415: a body that is not JSON
	CodeTooManyStreams       = "too_many_streams"       // 429: the token holds its maximum of event streams
	CodeInternal             = "internal"               // 500: see Ref
	CodeUnavailable          = "unavailable"            // 503: stopping, or not ready
)
