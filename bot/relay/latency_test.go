package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/config"
)

func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

// The speed targets, measured (numbers in the log): envelope acks
// while every worker is busy, and event → visible edit with the default
// one-second pacing. The assertions are loose (a shared CI machine); the
// logged numbers are the measurement.
func TestLatencies(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for several seconds")
	}
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 1
	busy := agenttest.Delayed(10*time.Second, agenttest.Turn{Text: "slow"})
	r := newRigWith(t, set, func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "occupy") {
			return busy
		}
		return approvalScript(req)
	})
	r.slack.Mention(alice, channel, "", "occupy the only worker")
	time.Sleep(300 * time.Millisecond)
	for i := range 100 {
		r.slack.DM(alice, fmt.Sprintf("D%03d", i), "queued behind the busy worker")
	}
	eventually(t, "all acknowledgements", func() bool { return len(r.slack.AckLatencies()) >= 101 })
	var acks []time.Duration
	for _, d := range r.slack.AckLatencies() {
		acks = append(acks, d)
	}
	p50, p99 := percentile(acks, 0.5), percentile(acks, 0.99)
	t.Logf("envelope ack over %d envelopes, the worker busy: p50 %v, p99 %v", len(acks), p50, p99)
	if p99 > time.Second {
		t.Errorf("ack p99 = %v", p99)
	}

	// Event → visible edit: a task waiting for approval, plan events
	// appended one every 400ms; each must show in the status message.
	m := r.slack.Mention(alice, "C0OTHER", "", "watch my plan")
	id := r.taskOfIn(t, "C0OTHER", m.TS)
	eventually(t, "the status message", func() bool { return len(r.slack.Thread("C0OTHER", m.TS)) > 0 })
	var lat []time.Duration
	for i := range 10 {
		mark := fmt.Sprintf("mark-%02d", i)
		plan, _ := json.Marshal(map[string]any{"plan": []map[string]string{{"content": mark, "status": "in_progress"}}})
		start := time.Now()
		if _, err := r.st.AppendEvent(context.Background(), id, "plan_updated", plan); err != nil {
			t.Fatal(err)
		}
		eventually(t, mark, func() bool {
			msgs := r.slack.Thread("C0OTHER", m.TS)
			return len(msgs) > 0 && strings.Contains(msgs[0].Text, mark)
		})
		lat = append(lat, time.Since(start))
		time.Sleep(400 * time.Millisecond)
	}
	t.Logf("event → visible edit over %d events: p50 %v, max %v", len(lat), percentile(lat, 0.5), percentile(lat, 1))
	if p := percentile(lat, 0.5); p > 1500*time.Millisecond {
		t.Errorf("edit p50 = %v, target 1.5s", p)
	}
}
