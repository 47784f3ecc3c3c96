package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// BenchmarkSpent measures what recording a result now reads: the task's
// usage events, folded into its spend. The benchmark task of issue 14 has
// 5 calls; a long goal may have hundreds; each among as many other events.
func BenchmarkSpent(b *testing.B) {
	for _, name := range []string{store.DriverSQLite, store.DriverPostgres} {
		for _, calls := range []int{5, 500} {
			b.Run(fmt.Sprintf("%s/%d-calls", name, calls), func(b *testing.B) {
				ctx := context.Background()
				st := storetest.Openers[name](b, store.Config{})
				task, _, err := st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Prompt: "p"}, "")
				if err != nil {
					b.Fatal(err)
				}
				for i := range calls {
					p := fmt.Sprintf(`{"step":%d,"model":"fake/big","prompt":1000,"completion":100,"cached":0,"cost":0.003}`, i)
					if _, err := st.AppendEvent(ctx, task.ID, "usage", json.RawMessage(p)); err != nil {
						b.Fatal(err)
					}
					for range 4 { // tool_started, tool_finished, message, …
						if _, err := st.AppendEvent(ctx, task.ID, "tool_finished", json.RawMessage(`{"result":"ok"}`)); err != nil {
							b.Fatal(err)
						}
					}
				}
				s := &Service{st: st}
				for b.Loop() {
					res, err := s.spent(ctx, task.ID)
					if err != nil || res.Models["fake/big"].Calls != calls {
						b.Fatalf("spent = %+v, %v", res, err)
					}
				}
			})
		}
	}
}
