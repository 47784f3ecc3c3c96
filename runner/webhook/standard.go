package webhook

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com): the
// message id, the Unix time it was signed at, and one or more signatures.
const (
	headerID        = "webhook-id"
	headerTimestamp = "webhook-timestamp"
	headerSignature = "webhook-signature"
)

// Tolerance is how far a Standard Webhooks timestamp may be from our
// clock, either way. Outside it a delivery is refused, so a captured
// request cannot be replayed later (dedupe on webhook-id covers the window).
const Tolerance = 5 * time.Minute

// secretPrefix marks a Standard Webhooks secret whose rest is base64.
const secretPrefix = "whsec_"

var (
	errNoID      = errors.New("the webhook-id header is missing")
	errTimestamp = errors.New("the webhook-timestamp header is not a Unix time")
	errStale     = fmt.Errorf("the webhook-timestamp is more than %s from the server's clock", Tolerance)
)

// maxSignatures bounds the list a sender may make us try.
const maxSignatures = 8

// parseStandardSignatures reads webhook-signature: space-separated
// "<version>,<base64>" entries. Entries of other versions (a future v1a)
// and malformed entries (no comma, bad base64, not 32 bytes) are skipped,
// as the scheme's reference verifiers skip them, so a sender rotating
// keys or adding a new scheme beside v1 still verifies; the result holds
// the well-formed v1 signatures, at least one.
func parseStandardSignatures(header string) ([][]byte, error) {
	if strings.TrimSpace(header) == "" {
		return nil, errNoSignature
	}
	fields := strings.Fields(header)
	if len(fields) > maxSignatures {
		return nil, errBadSignature
	}
	var sigs [][]byte
	for _, f := range fields {
		version, b64, ok := strings.Cut(f, ",")
		if !ok || version != "v1" {
			continue
		}
		// Strict: one signature has one spelling, so what is compared
		// (and logged) is exactly what was sent.
		sig, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil || len(sig) != sha256.Size {
			continue
		}
		sigs = append(sigs, sig)
	}
	if len(sigs) == 0 {
		return nil, errBadSignature
	}
	return sigs, nil
}

// decodeStandardSecret turns a configured secret into the HMAC key: after
// "whsec_" the key is base64, as the scheme's secrets are issued; a value
// without the prefix is used as it is.
func decodeStandardSecret(s string) ([]byte, error) {
	b64, ok := strings.CutPrefix(s, secretPrefix)
	if !ok {
		return []byte(s), nil
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) == 0 {
		return nil, errors.New(`a secret starting with "whsec_" must continue in base64`)
	}
	return key, nil
}

// newStandardCheck checks a Standard Webhooks delivery's headers and
// returns its id and the check its body must pass: the HMAC-SHA256 of
// "<id>.<timestamp>.<body>" under any secret must equal any v1 signature.
// The timestamp must be within Tolerance of now. Because the id is
// signed, a replay under a new id does not verify.
func newStandardCheck(h http.Header, secrets [][]byte, now time.Time) (string, *macCheck, error) {
	id := h.Get(headerID)
	if id == "" {
		return "", nil, errNoID
	}
	ts := h.Get(headerTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", nil, errTimestamp
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return "", nil, errStale
	}
	sigs, err := parseStandardSignatures(h.Get(headerSignature))
	if err != nil {
		return "", nil, err
	}
	return id, newMACCheck(secrets, []byte(id+"."+ts+"."), sigs), nil
}
