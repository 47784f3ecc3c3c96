package agent

import (
	"errors"
	"fmt"
	"sync"
)

// Jobs holds the background jobs of one run (bash with run_in_background):
// the tools that start, read and stop them share it, and whoever owns the
// run closes it when the run ends, which stops every job still running —
// a job never outlives its run. Safe for concurrent use.
type Jobs struct {
	mu     sync.Mutex
	next   int
	jobs   map[string]Job
	closed bool
}

// Job is one background job as Jobs keeps it.
type Job interface {
	// Stop ends the job (its whole process group) and returns once it has
	// ended. Stopping an ended job does nothing.
	Stop()
}

// ErrJobsClosed is returned by Jobs.Add once the run has ended.
var ErrJobsClosed = errors.New("the run has ended; no new background job can start")

// NewJobs returns an empty, open table.
func NewJobs() *Jobs { return &Jobs{jobs: map[string]Job{}} }

// Add registers a started job and returns its id (job-1, job-2, …). After
// Close it stops the job and fails with ErrJobsClosed.
func (j *Jobs) Add(job Job) (string, error) {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		job.Stop()
		return "", ErrJobsClosed
	}
	j.next++
	id := fmt.Sprintf("job-%d", j.next)
	j.jobs[id] = job
	j.mu.Unlock()
	return id, nil
}

// Get returns the job with id.
func (j *Jobs) Get(id string) (Job, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	job, ok := j.jobs[id]
	return job, ok
}

// IDs lists the jobs' ids in the order they started.
func (j *Jobs) IDs() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	ids := make([]string, 0, len(j.jobs))
	for i := 1; i <= j.next; i++ {
		if id := fmt.Sprintf("job-%d", i); j.jobs[id] != nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// Close stops every job and refuses new ones. A nil Jobs does nothing.
func (j *Jobs) Close() {
	if j == nil {
		return
	}
	j.mu.Lock()
	j.closed = true
	jobs := make([]Job, 0, len(j.jobs))
	for _, job := range j.jobs {
		jobs = append(jobs, job)
	}
	j.mu.Unlock()
	var wg sync.WaitGroup
	for _, job := range jobs {
		wg.Go(job.Stop)
	}
	wg.Wait()
}
