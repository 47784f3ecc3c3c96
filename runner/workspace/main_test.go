package workspace_test

import (
	"testing"

	"go.uber.org/goleak"

	"reasonix/policy"
)

// TestMain lets the test binary act as the Landlock sandbox helper, as
// the reasonix binary does, so the sandbox tests run the real thing.
func TestMain(m *testing.M) {
	policy.SandboxExecMain()
	goleak.VerifyTestMain(m)
}
