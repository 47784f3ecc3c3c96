package session

import (
	"os"
	"testing"

	"reasonix/policy"
)

// TestMain lets this test binary act as the Landlock sandbox helper, as
// the reasonix binary does, so sessions here get the sandbox users get.
func TestMain(m *testing.M) {
	policy.SandboxExecMain()
	os.Exit(m.Run())
}
