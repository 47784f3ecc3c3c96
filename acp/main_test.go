package acp

import (
	"testing"

	"go.uber.org/goleak"

	_ "reasonix/agent/builtin"
	"reasonix/policy"
)

// TestMain lets this binary act as the Landlock sandbox helper, as the
// reasonix binary does, and checks no goroutine outlives the tests.
func TestMain(m *testing.M) {
	policy.SandboxExecMain()
	goleak.VerifyTestMain(m)
}
