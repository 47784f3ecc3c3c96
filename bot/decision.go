package bot

import (
	"strings"

	"reasonix/runner"
)

// ParseDecision reads an approval decided in words, as an approver types
// it in a direct message with the bot:
//
//	approve <approval id>        — allow once
//	approve <approval id> task   — allow for the rest of the task
//	approve <approval id> always — allow always (a standing grant for the
//	                               task's schedule or webhook, else its
//	                               workspace; the grant or admin role)
//	deny <approval id>
//
// ("allow" is a synonym of approve; a leading '/' and Telegram's @bot
// suffix are accepted; "once" may be said). The id may be cut short, as
// the CLI's ids may: at least minPrefix characters after its "a_", which
// may be left out when what remains starts with a digit (every id does,
// and so no word of a sentence is taken for one); WholeApprovalID tells
// an id from a prefix, which the relay completes among the approvals the
// person may decide. Who may decide is the relay's check. ok is false for
// anything else, which is then read as an ordinary command.
func ParseDecision(text string) (approvalID string, choice runner.Choice, ok bool) {
	words := strings.Fields(text)
	if len(words) < 2 || len(words) > 3 {
		return "", "", false
	}
	verb := strings.ToLower(strings.TrimPrefix(words[0], "/"))
	if at := strings.IndexByte(verb, '@'); at > 0 {
		verb = verb[:at]
	}
	id := strings.ToLower(words[1]) // ids are lower case; phones capitalise
	if !strings.HasPrefix(id, "a_") && id != "" && id[0] >= '0' && id[0] <= '9' {
		id = "a_" + id
	}
	if !isApprovalRef(id) {
		return "", "", false
	}
	scope := ""
	if len(words) == 3 {
		scope = strings.ToLower(words[2])
	}
	switch {
	case (verb == "approve" || verb == "allow") && (scope == "" || scope == "once"):
		return id, runner.AllowOnce, true
	case (verb == "approve" || verb == "allow") && scope == "task":
		return id, runner.AllowTask, true
	case (verb == "approve" || verb == "allow") && scope == "always":
		return id, runner.AllowAlways, true
	case verb == "deny" && scope == "":
		return id, runner.Deny, true
	}
	return "", "", false
}

// minPrefix is the fewest characters of an approval id (after "a_") a
// decision may name it by.
const minPrefix = 4

// idLen is the length of an approval id after "a_".
const idLen = 26

// WholeApprovalID reports whether id is a whole approval id as the runner
// makes them, not a prefix of one.
func WholeApprovalID(id string) bool { return isApprovalRef(id) && len(id) == len("a_")+idLen }

// isApprovalRef accepts the runner's approval ids and their prefixes:
// "a_" and minPrefix to idLen characters of Crockford's base32 in lower
// case.
func isApprovalRef(id string) bool {
	rest, ok := strings.CutPrefix(id, "a_")
	if !ok || len(rest) < minPrefix || len(rest) > idLen {
		return false
	}
	for _, r := range rest {
		if !strings.ContainsRune("0123456789abcdefghjkmnpqrstvwxyz", r) {
			return false
		}
	}
	return true
}
