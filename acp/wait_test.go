package acp

import (
	"testing"
	"time"

	"reasonix/internal/eventually"
)

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	eventually.True(t, 10*time.Second, cond, "condition not met")
}
