package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// GitHub's published example (docs: "Validating webhook deliveries").
const (
	ghSecret    = "It's a Secret to Everybody"
	ghPayload   = "Hello, World!"
	ghSignature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
)

func ghHeader(sig string) http.Header {
	h := http.Header{}
	if sig != "" {
		h.Set(headerGitHubSignature, sig)
	}
	return h
}

func TestGitHubPublishedExample(t *testing.T) {
	mac, err := verifyGitHub(ghHeader(ghSignature), []byte(ghPayload), [][]byte{[]byte(ghSecret)})
	if err != nil || len(mac) != sha256.Size {
		t.Fatalf("the published example does not verify: %v", err)
	}
	// During a rotation the old secret may come first.
	if _, err := verifyGitHub(ghHeader(ghSignature), []byte(ghPayload), [][]byte{[]byte("old"), []byte(ghSecret)}); err != nil {
		t.Fatalf("second secret: %v", err)
	}
}

func TestGitHubRefusals(t *testing.T) {
	flipped := []byte(ghPayload)
	flipped[0] ^= 1
	sha1Only := http.Header{}
	sha1Only.Set(headerGitHubSHA1, "sha1=01dc10d0c83e72ed246219cdd91669667fe2ca59")
	for _, tc := range []struct {
		name string
		h    http.Header
		body []byte
		want error
	}{
		{"flipped byte", ghHeader(ghSignature), flipped, errMismatch},
		{"sha1 only", sha1Only, []byte(ghPayload), errSHA1Only},
		{"bad hex", ghHeader("sha256=zz7107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"), []byte(ghPayload), errBadSignature},
		{"short", ghHeader("sha256=757107ea"), []byte(ghPayload), errBadSignature},
		{"upper-case prefix", ghHeader("SHA256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"), []byte(ghPayload), errBadSignature},
		{"empty header", ghHeader(""), []byte(ghPayload), errNoSignature},
		{"wrong secret", ghHeader(ghSignature), []byte(ghPayload), errMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secrets := [][]byte{[]byte(ghSecret)}
			if tc.name == "wrong secret" {
				secrets = [][]byte{[]byte("not it")}
			}
			if _, err := verifyGitHub(tc.h, tc.body, secrets); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// standardSign signs as a Standard Webhooks sender does.
func standardSign(key []byte, id string, ts int64, body string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "." + body))
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func standardHeader(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set(headerID, id)
	h.Set(headerTimestamp, strconv.FormatInt(ts, 10))
	h.Set(headerSignature, sig)
	return h
}

func TestStandardWebhooks(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	secret, err := decodeStandardSecret("whsec_" + base64.StdEncoding.EncodeToString(key))
	if err != nil || string(secret) != string(key) {
		t.Fatalf("decode secret: %q, %v", secret, err)
	}
	if _, err := decodeStandardSecret("whsec_!!"); err == nil {
		t.Fatal("a whsec_ secret that is not base64 was accepted")
	}
	now := time.Unix(1_700_000_000, 0)
	body := `{"type":"build.failed"}`
	good := standardSign(key, "msg_1", now.Unix(), body)
	other := standardSign([]byte("another key"), "msg_1", now.Unix(), body)
	for _, tc := range []struct {
		name string
		h    http.Header
		at   time.Time
		want error
	}{
		{"valid", standardHeader("msg_1", now.Unix(), good), now, nil},
		{"several signatures", standardHeader("msg_1", now.Unix(), other+" v1a,ignored "+good), now, nil},
		{"at the window's edge", standardHeader("msg_1", now.Unix(), good), now.Add(Tolerance), nil},
		{"too old", standardHeader("msg_1", now.Unix(), good), now.Add(Tolerance + time.Second), errStale},
		{"from the future", standardHeader("msg_1", now.Unix(), good), now.Add(-Tolerance - time.Second), errStale},
		{"replayed under a new id", standardHeader("msg_2", now.Unix(), good), now, errMismatch},
		{"timestamp changed", standardHeader("msg_1", now.Unix()+1, good), now, errMismatch},
		{"no id", standardHeader("", now.Unix(), good), now, errNoID},
		{"no signature", standardHeader("msg_1", now.Unix(), ""), now, errNoSignature},
		{"bad base64", standardHeader("msg_1", now.Unix(), "v1,@@@"), now, errBadSignature},
		{"only other versions", standardHeader("msg_1", now.Unix(), "v2,"+good[3:]), now, errBadSignature},
		// A malformed entry beside a valid one is skipped, as the scheme's
		// reference verifiers do; only a header with no well-formed v1
		// entry is refused as malformed.
		{"malformed entry before a valid one", standardHeader("msg_1", now.Unix(), "v1,@@@ "+good), now, nil},
		{"malformed entries around a valid one", standardHeader("msg_1", now.Unix(), "garbage v1,"+good[3:10]+" "+good+" ,x v1,"), now, nil},
		{"malformed entry beside a wrong one", standardHeader("msg_1", now.Unix(), "v1,@@@ "+other), now, errMismatch},
		{"only malformed entries", standardHeader("msg_1", now.Unix(), "v1,@@@ nocomma v1,"+good[3:10]), now, errBadSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := verifyStandard(tc.h, []byte(body), [][]byte{secret}, tc.at)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err == nil && id != "msg_1" {
				t.Fatalf("id = %q", id)
			}
		})
	}
	bad := standardHeader("msg_1", now.Unix(), good)
	bad.Set(headerTimestamp, "1e9")
	if _, err := verifyStandard(bad, []byte(body), [][]byte{secret}, now); !errors.Is(err, errTimestamp) {
		t.Fatalf("non-integer timestamp: %v", err)
	}
}

// verifyGitHub runs the handler's GitHub check over a whole body at once
// and returns the signature's bytes.
func verifyGitHub(h http.Header, body []byte, secrets [][]byte) ([]byte, error) {
	c, err := newGitHubCheck(h, secrets)
	if err != nil {
		return nil, err
	}
	c.Write(body)
	if err := c.verify(); err != nil {
		return nil, err
	}
	return c.sigs[0], nil
}

// verifyStandard runs the handler's Standard Webhooks check over a whole
// body at once and returns the delivery's id.
func verifyStandard(h http.Header, body []byte, secrets [][]byte, now time.Time) (id string, err error) {
	id, c, err := newStandardCheck(h, secrets, now)
	if err != nil {
		return "", err
	}
	c.Write(body)
	if err := c.verify(); err != nil {
		return "", err
	}
	return id, nil
}
