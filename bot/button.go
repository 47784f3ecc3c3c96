package bot

import (
	"errors"
	"strings"

	"reasonix/runner"
)

// choiceCodes are the runner's choices (runner.Choice, the one vocabulary
// of decisions) as a button's data carries them, one letter each.
var choiceCodes = map[string]runner.Choice{"o": runner.AllowOnce, "t": runner.AllowTask, "a": runner.AllowAlways, "d": runner.Deny,
	"p": runner.StopPublish} // "p": a budget card's "Stop and publish what exists"

// maxButtonData is Telegram's callback_data limit, the smaller of the two.
const maxButtonData = 64

// ApprovalButton is the data of an approval button: the approval id and a
// one-letter choice, nothing that grants anything — the relay checks who
// clicked, where, and whether the approval is still open.
func ApprovalButton(approvalID string, choice runner.Choice) string {
	for code, c := range choiceCodes {
		if c == choice {
			return "ap:" + approvalID + ":" + code
		}
	}
	panic("bot: unknown approval choice " + string(choice))
}

// ErrButton: the button data is not ours or is malformed.
var ErrButton = errors.New("bot: unrecognised button data")

// ParseApprovalButton reverses ApprovalButton. Anything else — forged,
// truncated or from another app — is ErrButton.
func ParseApprovalButton(data string) (approvalID string, choice runner.Choice, err error) {
	if len(data) > maxButtonData {
		return "", "", ErrButton
	}
	rest, ok := strings.CutPrefix(data, "ap:")
	if !ok {
		return "", "", ErrButton
	}
	id, code, ok := strings.Cut(rest, ":")
	choice, known := choiceCodes[code]
	if !ok || !known || !validID(id) {
		return "", "", ErrButton
	}
	return id, choice, nil
}

// validID accepts the runner's ids: a short prefix, '_' and base32-ish
// characters.
func validID(id string) bool {
	if len(id) < 3 || len(id) > 40 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
