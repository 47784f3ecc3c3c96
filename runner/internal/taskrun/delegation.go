package taskrun

import "reasonix/goals"

// delegationSoFar is the task's delegation counters (seed §3.17) as its
// result keeps them: a goal's come from its stored goal state, already
// summed over its runs; a plain task's are the last stored result's plus
// this run's run_skill children. A run that started no host still shows
// the counters, zero or the earlier runs'.
func (r *Run) delegationSoFar() *goals.Counters {
	r.mu.Lock()
	f := r.delegation
	r.mu.Unlock()
	var c goals.Counters
	switch {
	case f != nil:
		c = f()
	case r.task.Result != nil && r.task.Result.Delegation != nil:
		c = *r.task.Result.Delegation
	}
	return &c
}

// CountDelegation makes the run's counters those of goal, or, for a plain
// task (goal nil), host's added to its earlier runs' (see delegationSoFar).
func (r *Run) CountDelegation(host *goals.Host, goal func() goals.Counters) {
	f := goal
	if f == nil {
		var base goals.Counters
		if prev := r.task.Result; prev != nil && prev.Delegation != nil {
			base = *prev.Delegation
		}
		f = func() goals.Counters { return base.Add(host.Counters()) }
	}
	r.mu.Lock()
	r.delegation = f
	r.mu.Unlock()
}
