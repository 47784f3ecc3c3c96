package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
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

// newGitHubCheck reads the request's X-Hub-Signature-256 and returns the
// check its body must pass: the HMACs under each secret (several during a
// rotation) are computed as the body is read (the check is its sink).
func newGitHubCheck(h http.Header, secrets [][]byte) (*macCheck, error) {
	header := h.Get(headerGitHubSignature)
	if header == "" && h.Get(headerGitHubSHA1) != "" {
		return nil, errSHA1Only
	}
	mac, err := parseGitHubSignature(header)
	if err != nil {
		return nil, err
	}
	return newMACCheck(secrets, nil, [][]byte{mac}), nil
}

// macCheck is an HMAC-SHA256 signature check fed the signed bytes as they
// are read: one HMAC per secret, each compared with every signature sent.
type macCheck struct {
	macs []hash.Hash
	sigs [][]byte
}

// newMACCheck starts an HMAC under each secret, each first fed prefix
// (the signed bytes that come before the body).
func newMACCheck(secrets [][]byte, prefix []byte, sigs [][]byte) *macCheck {
	c := &macCheck{sigs: sigs}
	for _, s := range secrets {
		m := hmac.New(sha256.New, s)
		m.Write(prefix)
		c.macs = append(c.macs, m)
	}
	return c
}

// Write feeds p to every HMAC; it never fails.
func (c *macCheck) Write(p []byte) (int, error) {
	for _, m := range c.macs {
		m.Write(p)
	}
	return len(p), nil
}

// verify compares in constant time per pair: every secret and every
// signature are tried, so the time taken does not say which one (or
// whether an early one) matched.
func (c *macCheck) verify() error {
	ok := 0
	for _, m := range c.macs {
		want := m.Sum(nil)
		for _, sig := range c.sigs {
			ok |= boolInt(hmac.Equal(sig, want))
		}
	}
	if ok == 0 {
		return errMismatch
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
