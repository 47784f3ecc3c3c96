package webhook_test

import (
	"testing"

	"go.uber.org/goleak"

	_ "reasonix/agent/builtin" // the tools a webhook task may try to call
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"),
		goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener"),
	)
}
