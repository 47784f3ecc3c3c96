package bottest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Slack identities of the fake workspace.
const (
	SlackTeam    = "T0FAKE"
	SlackBotUser = "UBOT"
)

// SlackMessage is a message as the fake holds it now (after edits).
type SlackMessage struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	Buttons  []SlackButton
	Edits    int
	// Posted and Edited are when the fake accepted the post and the last
	// edit (zero before any): what a person would see, and when.
	Posted, Edited time.Time
}

// SlackButton is a button of a posted message.
type SlackButton struct{ Label, Value string }

// SlackEphemeral is a chat.postEphemeral call.
type SlackEphemeral struct{ Channel, User, Text string }

// SlackLimits are the per-channel write limits the fake enforces on
// chat.postMessage and chat.update together: a token bucket.
type SlackLimits struct {
	PerSecond float64 // default 1
	Burst     int     // default 3
}

// Slack is a fake Slack: Web API and Socket Mode on one httptest server.
// Point the client at APIURL() (slack.OptionAPIURL).
type Slack struct {
	t   testing.TB
	srv *httptest.Server

	mu         sync.Mutex
	writeMu    sync.Mutex
	seq        int
	messages   map[string]*SlackMessage // by ts
	order      []string                 // ts in posting order
	reactions  []string                 // "channel/ts/name"
	ephemerals []SlackEphemeral
	conns      map[*websocket.Conn]bool
	connects   int
	connected  chan struct{}        // closed, and replaced, at every new connection
	acks       map[string]time.Time // envelope id -> ack time
	sent       map[string]time.Time // envelope id -> send time
	limits     SlackLimits
	buckets    map[string]*bucket
	violations int
	limited    int // 429s answered
	writes     map[string][]time.Time
	slow       atomic.Int64         // delay of every Web API write, in ns
	retries    []time.Duration      // see RetryUnacked
	timers     []*time.Timer        // pending redeliveries
	pending    int                  // redeliveries scheduled and not yet done
	closed     bool                 // no more redeliveries
	envEvent   map[string]string    // envelope id -> event id, for Events API envelopes
	names      map[string][2]string // user id -> display name, real name (see SetUser)
	lookups    map[string]int       // users.info calls by user id
	members    map[string][]string  // channel -> member ids (see SetMembers)
	memberRead map[string]int       // conversations.members calls by channel
}

type bucket struct {
	tokens float64
	at     time.Time
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// NewSlack starts a fake Slack that closes when the test ends.
func NewSlack(t testing.TB, limits SlackLimits) *Slack {
	if limits.PerSecond == 0 {
		limits.PerSecond = 1
	}
	if limits.Burst == 0 {
		limits.Burst = 3
	}
	s := &Slack{t: t, messages: map[string]*SlackMessage{}, conns: map[*websocket.Conn]bool{}, connected: make(chan struct{}),
		acks: map[string]time.Time{}, sent: map[string]time.Time{}, envEvent: map[string]string{}, limits: limits,
		buckets: map[string]*bucket{}, writes: map[string][]time.Time{},
		names: map[string][2]string{}, lookups: map[string]int{}, members: map[string][]string{}, memberRead: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/users.info", s.usersInfo)
	mux.HandleFunc("/api/conversations.open", func(w http.ResponseWriter, r *http.Request) {
		// A user's DM with the bot is "D" and the user id without its U:
		// what DMChannel answers.
		r.ParseForm()
		user := r.Form.Get("users")
		if user == "" || strings.Contains(user, ",") {
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_users"})
			return
		}
		writeJSON(w, map[string]any{"ok": true, "channel": map[string]any{"id": DMChannel(user)}})
	})
	mux.HandleFunc("/api/conversations.members", s.conversationMembers)
	mux.HandleFunc("/api/reactions.remove", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		reaction := r.Form.Get("channel") + "/" + r.Form.Get("timestamp") + "/" + r.Form.Get("name")
		s.mu.Lock()
		defer s.mu.Unlock()
		i := slices.Index(s.reactions, reaction)
		if i < 0 { // as Slack answers a reaction that is not there
			writeJSON(w, map[string]any{"ok": false, "error": "no_reaction"})
			return
		}
		s.reactions = slices.Delete(s.reactions, i, i+1)
		writeJSON(w, map[string]any{"ok": true})
	})
	mux.HandleFunc("/api/auth.test", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"ok": true, "user_id": SlackBotUser, "team_id": SlackTeam, "bot_id": "BFAKE", "user": "reasonix"})
	})
	mux.HandleFunc("/api/apps.connections.open", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer xapp-") {
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		writeJSON(w, map[string]any{"ok": true, "url": "ws://" + r.Host + "/socket"})
	})
	mux.HandleFunc("/socket", s.socket)
	mux.HandleFunc("/api/chat.postMessage", s.slowly(s.postMessage))
	mux.HandleFunc("/api/chat.update", s.slowly(s.update))
	mux.HandleFunc("/api/reactions.add", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(s.slow.Load()))
		r.ParseForm()
		reaction := r.Form.Get("channel") + "/" + r.Form.Get("timestamp") + "/" + r.Form.Get("name")
		s.mu.Lock()
		defer s.mu.Unlock()
		if slices.Contains(s.reactions, reaction) { // as Slack answers a repeat
			writeJSON(w, map[string]any{"ok": false, "error": "already_reacted"})
			return
		}
		s.reactions = append(s.reactions, reaction)
		writeJSON(w, map[string]any{"ok": true})
	})
	mux.HandleFunc("/api/chat.postEphemeral", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		s.mu.Lock()
		s.ephemerals = append(s.ephemerals, SlackEphemeral{Channel: r.Form.Get("channel"), User: r.Form.Get("user"), Text: r.Form.Get("text")})
		s.mu.Unlock()
		writeJSON(w, map[string]any{"ok": true, "message_ts": "1.0"})
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// DMChannel is the fake's id of user's direct conversation with the bot.
func DMChannel(user string) string { return "D" + strings.TrimPrefix(user, "U") }

// SetUser gives user a display name and a real name (either may be "");
// a user not set is called by their id without its leading U, title-cased
// ("UBOB" is "Bob"), as their real name.
func (s *Slack) SetUser(user, display, real string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[user] = [2]string{display, real}
}

// SlackRealName is the real name the fake gives a user not SetUser'd.
func SlackRealName(user string) string {
	id := strings.TrimPrefix(user, "U")
	if id == "" {
		return user
	}
	return strings.ToUpper(id[:1]) + strings.ToLower(id[1:])
}

// usersInfo answers users.info in Slack's shape: the user object with its
// profile, where display_name is "" for someone who never set one.
func (s *Slack) usersInfo(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	id := r.Form.Get("user")
	s.mu.Lock()
	s.lookups[id]++
	n, ok := s.names[id]
	s.mu.Unlock()
	if !ok {
		n = [2]string{"", SlackRealName(id)}
	}
	if id == "" || id == "UNOBODY" {
		writeJSON(w, map[string]any{"ok": false, "error": "user_not_found"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "user": map[string]any{
		"id": id, "team_id": SlackTeam, "name": strings.ToLower(id), "deleted": false, "real_name": n[1], "is_bot": false,
		"profile": map[string]any{"real_name": n[1], "display_name": n[0], "real_name_normalized": n[1], "display_name_normalized": n[0]},
	}})
}

// SetMembers makes users the members of channel, as conversations.members
// lists them. A channel never set is unknown to the fake: it answers
// channel_not_found, as Slack does for a channel the bot cannot see.
func (s *Slack) SetMembers(channel string, users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members[channel] = slices.Clone(users)
}

// SlackMembersPage is the most members the fake lists per
// conversations.members call, whatever limit asks: small, so that a client
// that does not follow next_cursor misses members.
const SlackMembersPage = 2

// conversationMembers answers conversations.members in Slack's shape: a
// page of member ids and response_metadata.next_cursor, an opaque cursor
// that is "" on the last page.
func (s *Slack) conversationMembers(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	channel := r.Form.Get("channel")
	s.mu.Lock()
	s.memberRead[channel]++
	all, ok := s.members[channel]
	s.mu.Unlock()
	if !ok {
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	from := 0
	if c := r.Form.Get("cursor"); c != "" {
		raw, err := base64.StdEncoding.DecodeString(c)
		n, _ := strings.CutPrefix(string(raw), "offset:")
		if from, err = strconv.Atoi(n); err != nil || !strings.HasPrefix(string(raw), "offset:") || from < 0 || from > len(all) {
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_cursor"})
			return
		}
	}
	size := SlackMembersPage
	if l, err := strconv.Atoi(r.Form.Get("limit")); err == nil && l > 0 && l < size {
		size = l
	}
	to := min(from+size, len(all))
	next := ""
	if to < len(all) {
		next = base64.StdEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(to)))
	}
	writeJSON(w, map[string]any{"ok": true, "members": all[from:to], "response_metadata": map[string]any{"next_cursor": next}})
}

// MemberReads is how many conversations.members calls asked about channel.
func (s *Slack) MemberReads(channel string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memberRead[channel]
}

// Lookups is how many users.info calls asked for user.
func (s *Slack) Lookups(user string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookups[user]
}

// Slow makes every Web API write (posts, edits, reactions) take d before
// it is answered, as a sluggish Slack would: whoever waits on one is busy.
func (s *Slack) Slow(d time.Duration) { s.slow.Store(int64(d)) }

func (s *Slack) slowly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(s.slow.Load()))
		h(w, r)
	}
}

// APIURL is the Web API base URL, with its trailing slash.
func (s *Slack) APIURL() string { return s.srv.URL + "/api/" }

// Close drops every connection and stops the server.
func (s *Slack) Close() {
	s.mu.Lock()
	s.closed = true
	for _, tm := range s.timers {
		tm.Stop()
	}
	s.mu.Unlock()
	s.DropConnections()
	s.srv.Close()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// allow applies the channel's bucket; false means answer 429.
func (s *Slack) allow(channel string) bool {
	now := time.Now()
	b := s.buckets[channel]
	if b == nil {
		b = &bucket{tokens: float64(s.limits.Burst), at: now}
		s.buckets[channel] = b
	}
	b.tokens = min(float64(s.limits.Burst), b.tokens+now.Sub(b.at).Seconds()*s.limits.PerSecond)
	b.at = now
	if b.tokens < 1 {
		s.violations++
		s.limited++
		return false
	}
	b.tokens--
	s.writes[channel] = append(s.writes[channel], now)
	return true
}

func (s *Slack) rateLimited(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusTooManyRequests)
	writeJSON(w, map[string]any{"ok": false, "error": "ratelimited"})
}

func (s *Slack) postMessage(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	ch := r.Form.Get("channel")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.allow(ch) {
		s.rateLimited(w)
		return
	}
	s.seq++
	ts := fmt.Sprintf("1700000000.%06d", s.seq)
	m := &SlackMessage{Channel: ch, TS: ts, ThreadTS: r.Form.Get("thread_ts"), Text: r.Form.Get("text"), Buttons: buttons(r.Form.Get("blocks")), Posted: time.Now()}
	s.messages[ts] = m
	s.order = append(s.order, ts)
	writeJSON(w, map[string]any{"ok": true, "channel": ch, "ts": ts})
}

func (s *Slack) update(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	ch, ts := r.Form.Get("channel"), r.Form.Get("ts")
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.messages[ts]
	if m == nil || m.Channel != ch {
		writeJSON(w, map[string]any{"ok": false, "error": "message_not_found"})
		return
	}
	if !s.allow(ch) {
		s.rateLimited(w)
		return
	}
	m.Text, m.Buttons = r.Form.Get("text"), buttons(r.Form.Get("blocks"))
	m.Edits++
	m.Edited = time.Now()
	writeJSON(w, map[string]any{"ok": true, "channel": ch, "ts": ts})
}

func buttons(blocksJSON string) []SlackButton {
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type  string `json:"type"`
			Value string `json:"value"`
			Text  struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	json.Unmarshal([]byte(blocksJSON), &blocks)
	var out []SlackButton
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.Type == "button" {
				out = append(out, SlackButton{Label: e.Text.Text, Value: e.Value})
			}
		}
	}
	return out
}

// socket serves a Socket Mode connection: hello, then whatever is sent;
// it reads acknowledgements.
func (s *Slack) socket(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.conns[c] = true
	s.connects++
	close(s.connected)
	s.connected = make(chan struct{})
	s.mu.Unlock()
	s.write(c, map[string]any{"type": "hello", "num_connections": 1})
	for {
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if err := c.ReadJSON(&ack); err != nil {
			break
		}
		s.mu.Lock()
		if _, dup := s.acks[ack.EnvelopeID]; !dup && ack.EnvelopeID != "" {
			s.acks[ack.EnvelopeID] = time.Now()
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

func (s *Slack) write(c *websocket.Conn, v any) error {
	s.writeMu.Lock() // gorilla connections allow one writer at a time
	defer s.writeMu.Unlock()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.WriteJSON(v)
}

// Connected reports how many Socket Mode connections are open, and how
// many were ever made.
func (s *Slack) Connected() (open, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns), s.connects
}

// send delivers an envelope on one open connection, waiting for one.
func (s *Slack) send(env map[string]any) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return // the test is over
		}
		var c *websocket.Conn
		for k := range s.conns {
			c = k
			break
		}
		if c != nil {
			s.sent[env["envelope_id"].(string)] = time.Now()
		}
		next := s.connected
		s.mu.Unlock()
		if c != nil && s.write(c, env) == nil {
			return
		}
		if c != nil {
			// The connection broke under the write: the client is gone or
			// reconnecting; wait for the next one.
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}
		timer := time.NewTimer(time.Until(deadline))
		select {
		case <-next:
			timer.Stop()
		case <-timer.C:
			s.t.Errorf("bottest: no Socket Mode connection to deliver %v", env["type"])
			return
		}
	}
}

func (s *Slack) next(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s%06d", prefix, s.seq)
}

// Event is an injected Events API delivery; keep it to redeliver it.
type Event struct {
	ID, TS string
	env    map[string]any
}

// Mention posts "<@UBOT> text" by user in channel (in thread when not "")
// as an app_mention.
func (s *Slack) Mention(user, channel, thread, text string) Event {
	return s.event("app_mention", user, channel, thread, "<@"+SlackBotUser+"> "+text, "channel")
}

// DM sends text to the bot in a direct message channel.
func (s *Slack) DM(user, channel, text string) Event {
	return s.event("message", user, channel, "", text, "im")
}

// Reply posts text in a thread without mentioning the bot.
func (s *Slack) Reply(user, channel, thread, text string) Event {
	return s.event("message", user, channel, thread, text, "channel")
}

func (s *Slack) event(typ, user, channel, thread, text, channelType string) Event {
	id, ts := s.next("Ev"), s.next("1700000001.")
	ev := map[string]any{"type": typ, "user": user, "text": text, "channel": channel, "ts": ts, "channel_type": channelType, "team": SlackTeam}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	payload := map[string]any{"team_id": SlackTeam, "event_id": id, "type": "event_callback", "event": ev}
	e := Event{ID: id, TS: ts, env: map[string]any{"type": "events_api", "payload": payload}}
	s.Redeliver(e, 0)
	return e
}

// Redeliver sends e again in a new envelope, as Slack does when it
// retries (retry > 0) or after a reconnect.
func (s *Slack) Redeliver(e Event, retry int) {
	env := map[string]any{}
	for k, v := range e.env {
		env[k] = v
	}
	envID := s.next("env-")
	env["envelope_id"] = envID
	env["retry_attempt"] = retry
	if retry > 0 {
		env["retry_reason"] = "timeout"
	}
	s.mu.Lock()
	s.envEvent[envID] = e.ID
	if retry < len(s.retries) && !s.closed {
		s.pending++
		s.timers = append(s.timers, time.AfterFunc(s.retries[retry], func() {
			s.retryUnacked(e, envID, retry+1)
			s.mu.Lock()
			s.pending--
			s.mu.Unlock()
		}))
	}
	s.mu.Unlock()
	s.send(env)
}

// RetryUnacked makes the fake redeliver an Events API envelope that is not
// acknowledged in time, as Slack does: after each of delays in turn
// (Slack's are 3 s, 1 min and 5 min), in a new envelope with retry_attempt
// counting up. Clicks and slash commands are never redelivered (Slack
// shows the user an error instead).
func (s *Slack) RetryUnacked(delays ...time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retries = delays
}

func (s *Slack) retryUnacked(e Event, envID string, retry int) {
	s.mu.Lock()
	_, acked := s.acks[envID]
	closed := s.closed
	s.mu.Unlock()
	if !acked && !closed {
		s.Redeliver(e, retry)
	}
}

// PendingRetries counts the redeliveries RetryUnacked has scheduled that
// have not yet happened (or been found unneeded): once it is 0, no
// further redelivery comes.
func (s *Slack) PendingRetries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// Envelopes counts the envelopes that carried Events API event eventID,
// and how many of them were acknowledged.
func (s *Slack) Envelopes(eventID string) (sent, acked int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for env, ev := range s.envEvent {
		if ev != eventID {
			continue
		}
		if _, ok := s.sent[env]; ok {
			sent++
		}
		if _, ok := s.acks[env]; ok {
			acked++
		}
	}
	return sent, acked
}

// Slash sends the /reasonix command.
func (s *Slack) Slash(user, channel, text string) { s.SlashCommand("/reasonix", user, channel, text) }

// SlashCommand sends slash command command (another app's, say) and
// returns its envelope's id.
func (s *Slack) SlashCommand(command, user, channel, text string) string {
	env := s.next("env-")
	s.send(map[string]any{"type": "slash_commands", "envelope_id": env, "payload": map[string]any{
		"command": command, "text": text, "user_id": user, "channel_id": channel, "team_id": SlackTeam, "trigger_id": s.next("trig-"),
	}})
	return env
}

// Click presses the button carrying value under message ts, as user, seen
// in channel. It returns the envelope's id.
func (s *Slack) Click(user, channel, ts, value string) string {
	env := s.next("env-")
	s.send(map[string]any{"type": "interactive", "envelope_id": env, "payload": map[string]any{
		"type": "block_actions", "team": map[string]any{"id": SlackTeam}, "user": map[string]any{"id": user},
		"channel": map[string]any{"id": channel}, "trigger_id": s.next("trig-"),
		"container": map[string]any{"type": "message", "message_ts": ts, "channel_id": channel},
		"actions":   []map[string]any{{"action_id": "reasonix_0", "value": value, "type": "button", "action_ts": "1.1"}},
	}})
	return env
}

// Disconnect asks every client to reconnect, as Slack does before it
// rotates a connection.
func (s *Slack) Disconnect() {
	s.mu.Lock()
	conns := make([]*websocket.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		s.write(c, map[string]any{"type": "disconnect", "reason": "refresh_requested"})
	}
}

// DropConnections cuts every Socket Mode link without a word.
func (s *Slack) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// Messages returns the messages in posting order, as they are now.
func (s *Slack) Messages() []SlackMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SlackMessage, 0, len(s.order))
	for _, ts := range s.order {
		out = append(out, *s.messages[ts])
	}
	return out
}

// Thread returns the messages posted in thread ts of channel.
func (s *Slack) Thread(channel, ts string) []SlackMessage {
	var out []SlackMessage
	for _, m := range s.Messages() {
		if m.Channel == channel && m.ThreadTS == ts {
			out = append(out, m)
		}
	}
	return out
}

// Reactions lists "channel/ts/name" of every reaction added.
func (s *Slack) Reactions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reactions...)
}

// Ephemerals lists the ephemeral answers.
func (s *Slack) Ephemerals() []SlackEphemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SlackEphemeral(nil), s.ephemerals...)
}

// Violations counts writes refused for exceeding the limits.
func (s *Slack) Violations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.violations
}

// AckLatencies returns, for every envelope sent, how long its
// acknowledgement took (missing ones are absent).
func (s *Slack) AckLatencies() map[string]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]time.Duration{}
	for id, at := range s.acks {
		if sent, ok := s.sent[id]; ok {
			out[id] = at.Sub(sent)
		}
	}
	return out
}

// Unacked lists envelopes sent but never acknowledged.
func (s *Slack) Unacked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id := range s.sent {
		if _, ok := s.acks[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}
