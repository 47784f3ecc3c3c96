// Package forge talks to the code forges a task's work is handed over to:
// GitHub (github.com and Enterprise Server) and GitLab. It covers the small
// part of their REST APIs that publishing needs: checking a token and a
// project, finding and opening pull (merge) requests, reading the CI state
// of a commit and a bounded excerpt of a failing check's log, commenting,
// and asking what permission a user holds.
//
// It is written over net/http and encoding/json rather than go-github or a
// GitLab SDK: the subset is a dozen endpoints, both SDKs are large and move
// fast, and owning the transport lets this package keep its promises in one
// place — the token travels only in a request header (never in a URL, an
// error or a log line), redirects never carry it to another host, every
// response body is read through a bound, and every call ends with its ctx.
//
// Errors wrap sentinels (ErrUnauthorized, ErrNotFound, ErrNoPush, …) so a
// caller can tell a person what to fix; their text is safe to log.
package forge
