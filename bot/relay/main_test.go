package relay_test

import (
	"testing"

	"go.uber.org/goleak"

	_ "reasonix/agent/builtin" // the built-in tools tasks use
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("modernc.org/sqlite.(*conn).interrupt.func1"))
}
