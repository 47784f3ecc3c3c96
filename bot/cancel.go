package bot

import "strings"

// CancelButton is the data of a button that cancels task taskID (under a
// "no progress" post, see bot/relay). Like an approval button it grants
// nothing: the relay checks that the clicked message is one of the
// task's and that the clicker may control the task.
func CancelButton(taskID string) string { return "cx:" + taskID }

// ParseCancelButton reverses CancelButton; anything else is ErrButton.
func ParseCancelButton(data string) (taskID string, err error) {
	if len(data) > maxButtonData {
		return "", ErrButton
	}
	id, ok := strings.CutPrefix(data, "cx:")
	if !ok || !validID(id) {
		return "", ErrButton
	}
	return id, nil
}
