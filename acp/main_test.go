package acp

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	_ "reasonix/agent/builtin"
	"reasonix/policy"
)

// TestMain lets this binary act as the Landlock sandbox helper, as the
// reasonix binary does, and checks no goroutine outlives the tests.
func TestMain(m *testing.M) {
	policy.SandboxExecMain()
	// The editor's terminals run this binary as `reasonix acp attach`.
	if len(os.Args) == 4 && os.Args[1] == "acp" && os.Args[2] == "attach" {
		code, err := Attach(context.Background(), os.Args[3], os.Getenv(AttachTokenEnv), os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "attach:", err)
			os.Exit(1)
		}
		os.Exit(ExitStatus(code))
	}
	goleak.VerifyTestMain(m)
}
