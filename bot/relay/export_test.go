package relay

// Passes counts the scans for live tasks and the recovery passes this
// relay has completed: a test waits for more of them to know the relay
// has looked again since, instead of sleeping.
func (r *Relay) Passes() (scans, recoveries int64) { return r.scans.Load(), r.recoveries.Load() }

// ScanOnce is one pass of the relay's scan: live tasks, tasks ended since
// the last, and the schedules' health.
func (r *Relay) ScanOnce() { r.scanOnce() }
