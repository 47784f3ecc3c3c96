package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
)

// GitHub's headers.
const (
	headerGitHubSignature = "X-Hub-Signature-256"
	headerGitHubSHA1      = "X-Hub-Signature"
	headerGitHubEvent     = "X-GitHub-Event"
	headerGitHubDelivery  = "X-GitHub-Delivery"
)

// Why a signature is refused. The messages are safe to show the sender and
// to record: they never hold the expected value.
var (
	errNoSignature  = errors.New("the signature header is missing")
	errSHA1Only     = errors.New("only a SHA-1 signature was sent; SHA-1 is refused, send X-Hub-Signature-256")
	errBadSignature = errors.New("the signature header is malformed")
	errMismatch     = errors.New("the signature does not match")
)

// parseGitHubSignature reads X-Hub-Signature-256: "sha256=" and 64 hex
// digits, nothing else. It is strict because a lenient parse of an
// authenticator only widens what a forger may try.
func parseGitHubSignature(header string) ([]byte, error) {
	if header == "" {
		return nil, errNoSignature
	}
	hexMAC, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexMAC) != 2*sha256.Size {
		return nil, errBadSignature
	}
	mac, err := hex.DecodeString(hexMAC)
	if err != nil {
		return nil, errBadSignature
	}
	return mac, nil
}

// verifyGitHub checks the request's X-Hub-Signature-256 against body with
// each secret (several during a rotation), in constant time per secret. It
// returns the signature's bytes, which identify the signed body for
// deduplication.
func verifyGitHub(h http.Header, body []byte, secrets [][]byte) ([]byte, error) {
	header := h.Get(headerGitHubSignature)
	if header == "" && h.Get(headerGitHubSHA1) != "" {
		return nil, errSHA1Only
	}
	mac, err := parseGitHubSignature(header)
	if err != nil {
		return nil, err
	}
	ok := 0
	for _, s := range secrets {
		m := hmac.New(sha256.New, s)
		m.Write(body)
		// Every secret is tried, so the time taken does not say which one
		// (or whether an early one) matched.
		ok |= boolInt(hmac.Equal(mac, m.Sum(nil)))
	}
	if ok == 0 {
		return nil, errMismatch
	}
	return mac, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
