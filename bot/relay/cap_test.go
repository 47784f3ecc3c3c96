package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot/relay"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// Past the per-task cap the thread gets no new messages but the final
// report (one message, its tail kept); the status message goes on being
// edited and says how much was held back.
func TestPerTaskPostCap(t *testing.T) {
	long := strings.Repeat("a long line of the answer\n", 600) + "END-MARK"
	r := newRigOpts(t, rigOpts{editInterval: 120 * time.Millisecond, tune: func(c *relay.Config) { c.MaxPostsPerTask = 3 },
		model: func(req agenttest.Request) agenttest.Turn {
			if res := lastTool(req); res != "" {
				return agenttest.Turn{Text: long}
			}
			return toolTurn("c1", "bash", `{"command":"echo ran > out.txt"}`)
		}})
	m := r.slack.Mention(alice, channel, "", "talk a lot")
	ap := r.approvalMessage(t, m.TS)
	id := r.taskOf(t, m.TS)
	for i := range 8 {
		q, _ := json.Marshal(map[string]string{"question": fmt.Sprintf("question %d?", i)})
		if _, err := r.st.AppendEvent(context.Background(), id, "question", q); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the status to count what was held back", func() bool {
		msgs := r.slack.Thread(channel, m.TS)
		return len(msgs) > 0 && strings.Contains(msgs[0].Text, "5 messages held back")
	})
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed)
	eventually(t, "the report", func() bool { return strings.Contains(r.threadText(m.TS), "END-MARK") })
	settle(t, r.relay, false) // nothing more may follow
	var questions, reports int
	for _, msg := range r.slack.Thread(channel, m.TS) {
		switch {
		case strings.Contains(msg.Text, "Question"):
			questions++
		case strings.Contains(msg.Text, "END-MARK"):
			reports++
			if !strings.Contains(msg.Text, "Task "+id) || strings.Contains(msg.Text, strings.Repeat("a long line of the answer\n", 200)) {
				t.Errorf("the capped report is not the compact tail:\n%.300s", msg.Text)
			}
		}
	}
	if questions != 3 || reports != 1 {
		t.Errorf("%d questions and %d report messages posted; want 3 and 1", questions, reports)
	}
	eventually(t, "the status message to be edited to its end", func() bool {
		return strings.Contains(r.slack.Thread(channel, m.TS)[0].Text, "— done")
	})
}
