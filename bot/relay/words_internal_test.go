package relay

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/bot"
)

// mdFormat is a markup for these tests: bold and code are visible.
type mdFormat struct{}

func (mdFormat) Escape(s string) string { return s }
func (mdFormat) Bold(s string) string   { return "*" + s + "*" }
func (mdFormat) Code(s string) string {
	if s == "" {
		return ""
	}
	return "```" + s + "```"
}
func (mdFormat) Limit() int { return 3000 }

func TestFleetApprovalIsAListOfNodesAndTasks(t *testing.T) {
	q := approvalRequest{Tool: "fleet", ExpiresAt: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC),
		Preview: `{"items":[{"id":"api","prompt":"add the endpoint\nwith tests"},{"id":"docs","prompt":"document it","depends_on":["api"]}],"fail_fast":true}`}
	got := q.text(mdFormat{}, "", "t_1", "")
	for _, want := range []string{"Starts 2 sub-agents:", "• *api* add the endpoint", "• *docs* document it (after api)"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, bad := range []string{`"items"`, "{", "```", "with tests"} {
		if strings.Contains(got, bad) {
			t.Errorf("the fleet approval shows %q:\n%s", bad, got)
		}
	}
	// Arguments cut short are not a list: they show as they are.
	q.Preview = `{"items":[{"id":"api","prompt":"add`
	if got := q.text(mdFormat{}, "", "t_1", ""); !strings.Contains(got, "```"+q.Preview+"```") {
		t.Errorf("cut-short arguments = \n%s", got)
	}
	// A call without a subject or preview gets no empty code block.
	q = approvalRequest{Tool: "task"}
	if got := q.text(mdFormat{}, "", "t_1", ""); strings.Contains(got, "``") {
		t.Errorf("empty code block in\n%s", got)
	}
}

func TestRefusalWordsNameTheCallAndTheWayForward(t *testing.T) {
	for _, c := range []struct {
		r    refusal
		want []string
	}{
		{refusal{Tool: "bash", Code: "deny_rule", Reason: "denied by rule Bash(rm -rf:*)", subject: "rm -rf build"},
			[]string{"The bash call “rm -rf build” was refused by a deny rule in [permissions]", "Bash(rm -rf:*)"}},
		{refusal{Tool: "write_file", Code: "unattended", subject: "main.go"},
			[]string{"The write_file call “main.go” needed a person's approval", "allow rule in [permissions]", "grant for this task", "posture"}},
		{refusal{Tool: "bash", Code: "expired", Subagent: "docs"},
			[]string{"The bash call of sub-agent docs", "nobody gave in time", "Reply in this thread"}},
		{refusal{Tool: "bash", Code: "declined"}, []string{"declined by an approver", "Reply in this thread"}},
	} {
		got := refusalWords(&c.r)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.r.Code, got, w)
			}
		}
		if strings.Contains(got, "tool_refused") || strings.Contains(got, "event") {
			t.Errorf("%s: %q names an event", c.r.Code, got)
		}
	}
}

// directory is a transport whose users.info is counted.
type directory struct {
	bot.Transport
	mu    sync.Mutex
	calls map[string]int
	fail  bool
	gate  chan struct{} // when set, each lookup waits for it
}

func (d *directory) Name() string { return "slack" }
func (d *directory) UserName(_ context.Context, _, user string) (string, error) {
	if d.gate != nil {
		<-d.gate
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[user]++
	if d.fail {
		return "", errors.New("users.info: ratelimited")
	}
	return "Name of " + user, nil
}

func TestNamesAreAskedOncePerUserPerHour(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &directory{calls: map[string]int{}}
	r := &Relay{transports: map[string]bot.Transport{"slack": d}, now: func() time.Time { return now },
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), names: names{known: map[string]nameEntry{}, inflight: map[string]chan struct{}{}}}
	ctx := context.Background()
	for range 50 {
		if got := r.who(ctx, "slack:T1/UBOB"); got != "Name of UBOB" {
			t.Fatalf("who = %q", got)
		}
	}
	now = now.Add(59 * time.Minute)
	r.who(ctx, "slack:T1/UBOB")
	if d.calls["UBOB"] != 1 {
		t.Fatalf("%d lookups within the hour, want 1", d.calls["UBOB"])
	}
	now = now.Add(2 * time.Minute)
	r.who(ctx, "slack:T1/UBOB")
	if d.calls["UBOB"] != 2 {
		t.Fatalf("%d lookups after the hour, want 2", d.calls["UBOB"])
	}

	// A failed lookup is not repeated within the hour either, and the
	// person is described without their principal id.
	d.fail = true
	for range 5 {
		if got := r.who(ctx, "slack:T1/UEVE"); got != "a Slack user (UEVE)" {
			t.Fatalf("who after a failed lookup = %q", got)
		}
	}
	if d.calls["UEVE"] != 1 {
		t.Fatalf("%d lookups of a failing user, want 1", d.calls["UEVE"])
	}

	// A name a delivery carried costs no lookup; other principals show as
	// they are.
	r.learn("telegram:42", "Ann")
	if got := r.who(ctx, "telegram:42"); got != "Ann" {
		t.Errorf("learned name = %q", got)
	}
	if got := r.who(ctx, "token:ci"); got != "token:ci" {
		t.Errorf("a non-chat principal = %q", got)
	}

	// Lookups at once for one user make one call.
	d.fail, d.gate = false, make(chan struct{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { r.who(ctx, "slack:T1/UCAROL") })
	}
	close(d.gate)
	wg.Wait()
	if d.calls["UCAROL"] != 1 {
		t.Errorf("%d concurrent lookups, want 1", d.calls["UCAROL"])
	}
}

func BenchmarkWhoCached(b *testing.B) {
	d := &directory{calls: map[string]int{}}
	r := &Relay{transports: map[string]bot.Transport{"slack": d}, now: time.Now,
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), names: names{known: map[string]nameEntry{}, inflight: map[string]chan struct{}{}}}
	ctx := context.Background()
	for b.Loop() {
		r.who(ctx, "slack:T1/UBOB")
	}
	if d.calls["UBOB"] != 1 {
		b.Fatalf("%d lookups, want 1", d.calls["UBOB"])
	}
}
