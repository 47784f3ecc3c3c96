package config

import (
	"testing"

	"reasonix/internal/intakebudget"
)

// TestIntakeBudgetDefault: the [serve] default is the budget's own.
func TestIntakeBudgetDefault(t *testing.T) {
	if got := Default().Serve.IntakeInflightBytes; got != intakebudget.DefaultBytes {
		t.Fatalf("serve.intake_inflight_bytes defaults to %d, intakebudget to %d", got, intakebudget.DefaultBytes)
	}
}
