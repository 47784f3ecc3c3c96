package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"reasonix/runner/apitype"
)

// A pending approval without a deadline says "no deadline", in the list
// and in show, never a zero time.
func TestApprovalWithoutDeadlineIsShownSo(t *testing.T) {
	a := apitype.Approval{ID: "a_1", TaskID: "t_1", Tool: "bash", State: apitype.ApprovalPending, Requester: "api:alice"}
	if got := approvalExpiry(a, time.TimeOnly); got != "no deadline" {
		t.Errorf("approvalExpiry = %q", got)
	}
	var b bytes.Buffer
	printApproval(&b, style{}, a)
	if !strings.Contains(b.String(), "(no deadline)") || strings.Contains(b.String(), "0001") {
		t.Errorf("show prints %q", b.String())
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a.ExpiresAt = &at
	if got := approvalExpiry(a, time.DateTime); got != at.Local().Format(time.DateTime) {
		t.Errorf("approvalExpiry = %q", got)
	}
}
