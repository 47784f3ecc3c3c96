package policy

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain lets the test binary act as the Landlock sandbox helper, as
// the reasonix binary does (SandboxExecMain never returns in the helper).
func TestMain(m *testing.M) {
	SandboxExecMain()
	goleak.VerifyTestMain(m)
}
