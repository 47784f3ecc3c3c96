// Package apitype is the wire format of the runner's HTTP API (/api/v1):
// the records it answers with, the bodies it accepts and its error body, as
// plain structs with JSON tags. The server (runner/httpapi) encodes them and
// the Go client (runner/client) decodes them, so the two cannot drift.
//
// The package imports nothing but the standard library: a program that
// drives Reasonix through runner/client does not link the store, the
// sandbox or the model clients. Its types hold no behaviour beyond small
// helpers such as TaskState.Terminal.
//
// Compatibility: fields may be added to these types in any release (a
// client should tolerate fields it does not know, as encoding/json does);
// a field is never renamed, retyped or given a new meaning within /api/v1.
// String enumerations (TaskState, Source, …) may gain values; code
// switching on them needs a default case.
package apitype
