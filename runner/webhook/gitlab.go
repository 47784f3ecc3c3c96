package webhook

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"hash"
	"net/http"
)

// GitLab's headers.
const (
	headerGitLabToken = "X-Gitlab-Token"
	headerGitLabUUID  = "X-Gitlab-Event-UUID"
)

var errGitLabToken = errors.New("the X-Gitlab-Token header is missing or does not match")

// gitLabTokenOK compares the token GitLab sends with every configured
// secret in constant time: each is compared through its SHA-256, so
// neither the length nor the position of a difference shows in the time
// taken, and every secret is tried.
func gitLabTokenOK(token string, secrets [][]byte) bool {
	if token == "" {
		return false
	}
	got := sha256.Sum256([]byte(token))
	ok := 0
	for _, s := range secrets {
		want := sha256.Sum256(s)
		ok |= subtle.ConstantTimeCompare(got[:], want[:])
	}
	return ok == 1
}

// gitlab serves a kind = "gitlab" delivery. GitLab signs nothing: its
// secret token is sent as is, so it is checked before the body is read,
// and the body's hash dedupes a redelivery (GitLab resends the same
// body) beside the event UUID.
func (h *Handler) gitlab(r *http.Request, hk *hook) outcome {
	o := outcome{delivery: r.Header.Get(headerGitLabUUID)}
	if !gitLabTokenOK(r.Header.Get(headerGitLabToken), hk.secrets) {
		return rejected(o, http.StatusUnauthorized, errGitLabToken.Error())
	}
	sum := sha256.New()
	body, err := h.budget.Read(r, hk.maxBody(), sum)
	if err != nil {
		return refused(o, err)
	}
	defer body.Release()
	if len(o.delivery) > maxDeliveryID {
		return rejected(o, http.StatusBadRequest, "the X-Gitlab-Event-UUID header is too long")
	}
	keys := []string{hk.cfg.Name + ":body:" + hexSum(sum)}
	if o.delivery != "" {
		keys = append(keys, hk.cfg.Name+":uuid:"+o.delivery)
	}
	return h.accept(r.Context(), hk, o, body.Bytes(), keys)
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }
