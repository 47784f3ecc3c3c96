package bottest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/internal/eventually"
)

// Platform is one chat platform as TestTransport drives it: a transport
// of the package under test, not started, talking to a fresh fake of the
// platform (both ended when the test ends), and the fake's side of it.
type Platform struct {
	New func(t *testing.T) (bot.Transport, Harness)
}

// Harness is the fake platform's side of a conformance test.
type Harness interface {
	// Channel is where Send's messages are said and where the suite
	// posts.
	Channel() string
	// Send says text to the bot in Channel, addressed to it (a mention, a
	// message in a private chat), from a user the platform knows. The
	// platform delivers it again, as it does, while it is not
	// acknowledged.
	Send(text string)
	// Acked reports whether the platform holds delivery eventID
	// acknowledged: it will not deliver it again.
	Acked(eventID string) bool
	// Text is the text of message id in Channel as the platform shows it
	// now; false when there is none.
	Text(id string) (string, bool)
	// Click presses the button carrying data under message id.
	Click(id, data string)
	// Answers lists the answers shown to clickers alone.
	Answers() []string
}

// wait bounds every wait of the suite; the fakes answer in milliseconds.
const wait = 10 * time.Second

// TestTransport is the conformance suite of a chat transport: what the
// relay relies on from every platform (bot.Transport and the bot.Receiver
// intake contract). Run it from the platform package's tests, once per
// intake mode.
func TestTransport(t *testing.T, p Platform) {
	t.Run("RecordThenAcknowledgeThenHandle", func(t *testing.T) { testRecordFirst(t, p) })
	t.Run("UnrecordedIsDeliveredAgain", func(t *testing.T) { testUnrecorded(t, p) })
	t.Run("PostEditAndClick", func(t *testing.T) { testPostEditClick(t, p) })
}

// receiver is a bot.Receiver that records what it is given, fails to
// record a message while fail says so, and runs each handling only once
// gate is closed.
type receiver struct {
	mu       sync.Mutex
	received []bot.Inbound
	recorded map[string]bool // event id -> recorded
	handled  map[string]int  // event id -> handlings
	clicks   []bot.Click
	fail     func(bot.Inbound) bool
	gate     chan struct{}
	answer   string
}

func newReceiver() *receiver {
	return &receiver{recorded: map[string]bool{}, handled: map[string]int{}, fail: func(bot.Inbound) bool { return false }, gate: make(chan struct{})}
}

func (r *receiver) Receive(_ context.Context, in bot.Inbound) (func(context.Context), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received = append(r.received, in)
	if r.fail(in) {
		return nil, errors.New("bottest: the store is down")
	}
	if r.recorded[in.EventID] {
		return nil, nil // recorded before: a receiver keeps one receipt
	}
	r.recorded[in.EventID] = true
	return func(ctx context.Context) {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return
		}
		r.mu.Lock()
		r.handled[in.EventID]++
		r.mu.Unlock()
	}, nil
}

func (r *receiver) HandleMessage(ctx context.Context, in bot.Inbound) {
	if run, err := r.Receive(ctx, in); err == nil && run != nil {
		run(ctx)
	}
}

func (r *receiver) HandleClick(_ context.Context, c bot.Click) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clicks = append(r.clicks, c)
	return r.answer
}

// deliveries returns the messages received with text, in order.
func (r *receiver) deliveries(text string) []bot.Inbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []bot.Inbound
	for _, in := range r.received {
		if in.Text == text {
			out = append(out, in)
		}
	}
	return out
}

func (r *receiver) handlings(eventID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.handled[eventID]
}

func start(t *testing.T, p Platform, r *receiver) (bot.Transport, Harness) {
	t.Helper()
	tr, h := p.New(t)
	if err := tr.Start(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if err := tr.Stop(ctx); err != nil {
			t.Errorf("stopping %s: %v", tr.Name(), err)
		}
	})
	return tr, h
}

// A message is handed to Receive as an addressed Inbound of the platform,
// acknowledged once recorded while its handling is still held, and then
// handled once; recorded once, it is not received again.
func testRecordFirst(t *testing.T, p Platform) {
	r := newReceiver()
	tr, h := start(t, p, r)
	h.Send("first words")
	eventually.True(t, wait, func() bool { return len(r.deliveries("first words")) > 0 }, "the message to be received")
	in := r.deliveries("first words")[0]
	if in.Transport != tr.Name() || in.EventID == "" || !in.Addressed || in.Channel != h.Channel() || in.User == "" || in.MessageID == "" {
		t.Errorf("received %+v; want an addressed message of %s in %s with its event, user and message ids", in, tr.Name(), h.Channel())
	}
	eventually.True(t, wait, func() bool { return h.Acked(in.EventID) }, "the recorded delivery to be acknowledged before it is handled")
	if n := r.handlings(in.EventID); n != 0 {
		t.Fatalf("handled %d times while its handling was held", n)
	}
	close(r.gate)
	eventually.True(t, wait, func() bool { return r.handlings(in.EventID) == 1 }, "the handling once acknowledged")
	// A later message is received and handled after it: by then a
	// repeat of the first would have been received too.
	h.Send("second words")
	eventually.True(t, wait, func() bool {
		d := r.deliveries("second words")
		return len(d) > 0 && r.handlings(d[0].EventID) == 1
	}, "the second message to be handled")
	if d := r.deliveries("first words"); len(d) != 1 {
		t.Errorf("the first message was received %d times; acknowledged, it is not delivered again", len(d))
	}
	if n := r.handlings(in.EventID); n != 1 {
		t.Errorf("the first message was handled %d times, want 1", n)
	}
}

// A message the receiver could not record is not acknowledged: the
// platform delivers it again, under the same event id, and it is handled
// once recorded.
func testUnrecorded(t *testing.T, p Platform) {
	r := newReceiver()
	close(r.gate)
	var failures int
	r.fail = func(in bot.Inbound) bool {
		if in.Text != "flaky words" {
			return false
		}
		failures++
		return failures == 1 // the first delivery only; calls are under r.mu
	}
	_, h := start(t, p, r)
	h.Send("flaky words")
	eventually.True(t, wait, func() bool { return len(r.deliveries("flaky words")) >= 2 }, "the unrecorded message to be delivered again")
	d := r.deliveries("flaky words")
	if d[0].EventID != d[1].EventID {
		t.Errorf("the redelivery has event id %q, the delivery %q: the receiver keys its receipt on it", d[1].EventID, d[0].EventID)
	}
	eventually.True(t, wait, func() bool { return r.handlings(d[0].EventID) == 1 && h.Acked(d[0].EventID) }, "the redelivery recorded, acknowledged and handled")
}

// Post returns the platform's id of a message in the channel, Edit
// replaces its text, and a click on its button reaches HandleClick naming
// the transport, the channel, the message and the button's data; the
// answer is shown to the clicker alone.
func testPostEditClick(t *testing.T, p Platform) {
	r := newReceiver()
	r.answer = "noted, clicker"
	tr, h := start(t, p, r)
	ctx := context.Background()
	data := "ap:a_suite:o"
	id, err := tr.Post(ctx, bot.Message{Channel: h.Channel(), Text: "posted words", Buttons: []bot.Button{{Label: "Go", Data: data, Style: "primary"}}})
	if err != nil || id == "" {
		t.Fatalf("Post = %q, %v", id, err)
	}
	if got, ok := h.Text(id); !ok || !strings.Contains(got, "posted words") {
		t.Errorf("message %s shows %q (%v), want the posted words", id, got, ok)
	}
	h.Click(id, data)
	eventually.True(t, wait, func() bool { return slices.Contains(h.Answers(), r.answer) }, "the click's answer")
	r.mu.Lock()
	clicks := slices.Clone(r.clicks)
	r.mu.Unlock()
	if len(clicks) != 1 || clicks[0].Transport != tr.Name() || clicks[0].Channel != h.Channel() || clicks[0].MessageID != id ||
		clicks[0].Data != data || clicks[0].User == "" {
		t.Errorf("clicks = %+v; want one on message %s in %s with data %q and its user", clicks, id, h.Channel(), data)
	}
	if err := tr.Edit(ctx, id, bot.Message{Channel: h.Channel(), Text: "edited words"}); err != nil {
		t.Fatal(err)
	}
	if got, ok := h.Text(id); !ok || !strings.Contains(got, "edited words") {
		t.Errorf("message %s shows %q (%v) after the edit", id, got, ok)
	}
}
