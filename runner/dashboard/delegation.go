package dashboard

import "reasonix/runner/store"

// counterRow is one delegation counter as the task page lists it.
type counterRow struct {
	Name  string
	Value int
}

// delegationOf is the task's delegation counters (the SPEC's "Measuring
// delegation") for its page: nil before its result keeps them.
func delegationOf(t store.Task) []counterRow {
	if t.Result == nil || t.Result.Delegation == nil {
		return nil
	}
	fields := t.Result.Delegation.Fields()
	rows := make([]counterRow, 0, len(fields))
	for _, f := range fields {
		rows = append(rows, counterRow{f.Name, f.Value})
	}
	return rows
}
