package bottest

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Telegram identities of the fake.
const (
	TelegramBotID   = 999
	TelegramBotName = "reasonix_bot"
)

// TelegramMessage is a message the bot posted, as it is now.
type TelegramMessage struct {
	Chat      string
	ID        int64
	ReplyTo   string
	Text      string
	ParseMode string
	Buttons   []SlackButton // label and callback data
	Edits     int
	// Posted and Edited are when the fake accepted the post and the last
	// edit (zero before any).
	Posted, Edited time.Time
}

// TelegramWebhook is a setWebhook call.
type TelegramWebhook struct{ URL, SecretToken, AllowedUpdates string }

// TelegramAnswer is an answerCallbackQuery call.
type TelegramAnswer struct{ CallbackID, Text string }

// Telegram is a fake Telegram Bot API. Point the client at Endpoint().
type Telegram struct {
	t     testing.TB
	token string
	srv   *httptest.Server

	mu         sync.Mutex
	wake       chan struct{}
	updates    []map[string]any
	nextUpdate int64
	nextMsg    int64
	confirmed  int64         // the highest offset a poll asked for
	polls      []int64       // the offset of every getUpdates, in order
	polling    chan struct{} // closed to end the getUpdates in flight, as a newer one does
	conflicts  int           // getUpdates ended by a concurrent one (Telegram's 409)
	messages   map[int64]*TelegramMessage
	order      []int64
	answers    []TelegramAnswer
	webhooks   []TelegramWebhook
	failHooks  int // setWebhook calls still to refuse
	limits     SlackLimits
	buckets    map[string]*bucket
	groupSends map[string][]time.Time
	violations int
	names      map[int64]string  // first names (see SetName)
	getChats   map[string]int    // getChat calls by chat id
	actions    []TelegramAction  // sendChatAction calls
	reactions  map[string]string // "chat/message" -> the bot's emoji reaction
	reactLog   []string          // "chat/message/emoji" per setMessageReaction, "" emoji for a removal
	statuses   map[string]string // "chat/user" -> getChatMember status (see SetChatMember)
	memberAsks map[string]int    // getChatMember calls by "chat/user"
}

// TelegramAction is a sendChatAction call.
type TelegramAction struct {
	Chat, Action string
	At           time.Time
}

// NewTelegram starts a fake Telegram answering to token.
func NewTelegram(t testing.TB, token string, limits SlackLimits) *Telegram {
	if limits.PerSecond == 0 {
		limits.PerSecond = 1
	}
	if limits.Burst == 0 {
		limits.Burst = 3
	}
	f := &Telegram{t: t, token: token, wake: make(chan struct{}), nextUpdate: 100, nextMsg: 1000,
		messages: map[int64]*TelegramMessage{}, limits: limits, buckets: map[string]*bucket{}, groupSends: map[string][]time.Time{},
		names: map[int64]string{}, getChats: map[string]int{}, reactions: map[string]string{},
		statuses: map[string]string{}, memberAsks: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// Endpoint is the client's API endpoint template.
func (f *Telegram) Endpoint() string { return f.srv.URL + "/bot%s/%s" }

func (f *Telegram) reply(w http.ResponseWriter, result any) {
	writeJSON(w, map[string]any{"ok": true, "result": result})
}

func (f *Telegram) fail(w http.ResponseWriter, code int, desc string, retryAfter int) {
	body := map[string]any{"ok": false, "error_code": code, "description": desc}
	if retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": retryAfter}
	}
	w.WriteHeader(code)
	writeJSON(w, body)
}

func (f *Telegram) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || token != f.token {
		f.fail(w, 401, "Unauthorized", 0)
		return
	}
	r.ParseForm()
	switch method {
	case "getMe":
		f.reply(w, map[string]any{"id": TelegramBotID, "is_bot": true, "first_name": "Reasonix", "username": TelegramBotName})
	case "getUpdates":
		f.getUpdates(w, r)
	case "sendMessage":
		f.send(w, r, false)
	case "editMessageText":
		f.send(w, r, true)
	case "setWebhook":
		f.mu.Lock()
		fail := f.failHooks > 0
		if fail {
			f.failHooks--
		} else {
			f.webhooks = append(f.webhooks, TelegramWebhook{URL: r.Form.Get("url"), SecretToken: r.Form.Get("secret_token"), AllowedUpdates: r.Form.Get("allowed_updates")})
		}
		f.mu.Unlock()
		if fail {
			f.fail(w, 502, "Bad Gateway", 0)
			return
		}
		f.reply(w, true)
	case "getChat":
		id := r.Form.Get("chat_id")
		n, err := strconv.ParseInt(id, 10, 64)
		f.mu.Lock()
		f.getChats[id]++
		f.mu.Unlock()
		if err != nil || n <= 0 {
			f.fail(w, 400, "Bad Request: chat not found", 0)
			return
		}
		f.reply(w, map[string]any{"id": n, "type": "private", "first_name": f.FirstName(n)})
	case "getChatMember":
		f.getChatMember(w, r)
	case "sendChatAction":
		f.mu.Lock()
		f.actions = append(f.actions, TelegramAction{Chat: r.Form.Get("chat_id"), Action: r.Form.Get("action"), At: time.Now()})
		f.mu.Unlock()
		f.reply(w, true)
	case "setMessageReaction":
		var rs []struct {
			Type  string `json:"type"`
			Emoji string `json:"emoji"`
		}
		if err := json.Unmarshal([]byte(cmpOr(r.Form.Get("reaction"), "[]")), &rs); err != nil {
			f.fail(w, 400, "Bad Request: can't parse reaction types JSON object", 0)
			return
		}
		key := r.Form.Get("chat_id") + "/" + r.Form.Get("message_id")
		f.mu.Lock()
		if len(rs) == 0 {
			delete(f.reactions, key)
			f.reactLog = append(f.reactLog, key+"/")
		} else {
			f.reactions[key] = rs[0].Emoji
			f.reactLog = append(f.reactLog, key+"/"+rs[0].Emoji)
		}
		f.mu.Unlock()
		f.reply(w, true)
	case "answerCallbackQuery":
		f.mu.Lock()
		f.answers = append(f.answers, TelegramAnswer{CallbackID: r.Form.Get("callback_query_id"), Text: r.Form.Get("text")})
		f.mu.Unlock()
		f.reply(w, true)
	default:
		f.fail(w, 404, "Not Found: method not found", 0)
	}
}

// SetChatMember sets what getChatMember answers for user in chat: a
// status ("creator", "administrator", "member", "restricted", "left",
// "kicked"), or "" for a user the chat does not know (Telegram's 400
// "Bad Request: user not found"). A user never set is a "member".
func (f *Telegram) SetChatMember(chat string, user int64, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses[chat+"/"+strconv.FormatInt(user, 10)] = status
}

// MemberAsks is how many getChatMember calls asked about user in chat.
func (f *Telegram) MemberAsks(chat string, user int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.memberAsks[chat+"/"+strconv.FormatInt(user, 10)]
}

// getChatMember answers in the Bot API's shape: a ChatMember object, its
// status telling which kind (a restricted member carries is_member).
func (f *Telegram) getChatMember(w http.ResponseWriter, r *http.Request) {
	chat, user := r.Form.Get("chat_id"), r.Form.Get("user_id")
	id, err := strconv.ParseInt(user, 10, 64)
	if err != nil || id <= 0 {
		f.fail(w, 400, "Bad Request: invalid user_id specified", 0)
		return
	}
	if _, err := strconv.ParseInt(chat, 10, 64); err != nil {
		f.fail(w, 400, "Bad Request: chat not found", 0)
		return
	}
	key := chat + "/" + user
	f.mu.Lock()
	f.memberAsks[key]++
	status, ok := f.statuses[key]
	f.mu.Unlock()
	if !ok {
		status = "member"
	}
	if status == "" {
		f.fail(w, 400, "Bad Request: user not found", 0)
		return
	}
	m := map[string]any{"status": status, "user": map[string]any{"id": id, "is_bot": false, "first_name": f.FirstName(id)}}
	if status == "restricted" {
		m["is_member"] = true
		m["until_date"] = 0
	}
	f.reply(w, m)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// SetName gives user a first name; a user not set is "u<id>".
func (f *Telegram) SetName(user int64, first string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names[user] = first
}

// FirstName is the first name the fake gives user.
func (f *Telegram) FirstName(user int64) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.names[user]; ok {
		return n
	}
	return "u" + strconv.FormatInt(user, 10)
}

// GetChats is how many getChat calls asked for chat (a user's id is their
// private chat's).
func (f *Telegram) GetChats(chat int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.getChats[strconv.FormatInt(chat, 10)]
}

// Actions returns the sendChatAction calls in chat.
func (f *Telegram) Actions(chat int64) []TelegramAction {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []TelegramAction
	for _, a := range f.actions {
		if a.Chat == strconv.FormatInt(chat, 10) {
			out = append(out, a)
		}
	}
	return out
}

// Reaction is the bot's reaction on message id in chat, "" for none.
func (f *Telegram) Reaction(chat, id int64) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reactions[strconv.FormatInt(chat, 10)+"/"+strconv.FormatInt(id, 10)]
}

// Reacted counts the setMessageReaction calls in chat that set emoji.
func (f *Telegram) Reacted(chat int64, emoji string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, prefix := 0, strconv.FormatInt(chat, 10)+"/"
	for _, x := range f.reactLog {
		if strings.HasPrefix(x, prefix) && strings.HasSuffix(x, "/"+emoji) {
			n++
		}
	}
	return n
}

// getUpdates long-polls. As Telegram does, a second getUpdates for the
// same bot while one is in flight ends the first with 409 Conflict: two
// processes polling one token fight over the updates.
func (f *Telegram) getUpdates(w http.ResponseWriter, r *http.Request) {
	offset, _ := strconv.ParseInt(r.Form.Get("offset"), 10, 64)
	timeout, _ := strconv.Atoi(r.Form.Get("timeout"))
	deadline := time.After(time.Duration(timeout) * time.Second)
	mine := make(chan struct{})
	f.mu.Lock()
	f.polls = append(f.polls, offset)
	if f.polling != nil {
		close(f.polling)
		f.conflicts++
	}
	f.polling = mine
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		if f.polling == mine {
			f.polling = nil
		}
		f.mu.Unlock()
	}()
	for {
		f.mu.Lock()
		f.confirmed = max(f.confirmed, offset)
		var out []map[string]any
		for _, u := range f.updates {
			if u["update_id"].(int64) >= offset {
				out = append(out, u)
			}
		}
		wake := f.wake
		f.mu.Unlock()
		if len(out) > 0 {
			f.reply(w, out)
			return
		}
		select {
		case <-wake:
		case <-mine:
			f.fail(w, http.StatusConflict, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", 0)
			return
		case <-deadline:
			f.reply(w, []any{})
			return
		case <-r.Context().Done():
			return
		}
	}
}

// Conflicts counts the polls ended by another poll in flight at the same
// time (Telegram's 409): zero when polling took turns.
func (f *Telegram) Conflicts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conflicts
}

var allowedTag = regexp.MustCompile(`^</?(b|i|u|s|code|pre|a)( [^>]*)?>$`)
var anyTag = regexp.MustCompile(`<[^>]*>?`)
var entity = regexp.MustCompile(`&(#?[a-zA-Z0-9]+);`)

// checkHTML refuses what Telegram refuses in HTML mode: unknown tags, a
// bare '<' or '&', unbalanced tags.
func checkHTML(s string) bool {
	depth := map[string]int{}
	for _, tag := range anyTag.FindAllString(s, -1) {
		if !allowedTag.MatchString(tag) {
			return false
		}
		name := strings.Trim(strings.Fields(strings.Trim(tag, "<>/"))[0], "/")
		if strings.HasPrefix(tag, "</") {
			depth[name]--
			if depth[name] < 0 {
				return false
			}
		} else {
			depth[name]++
		}
	}
	for _, d := range depth {
		if d != 0 {
			return false
		}
	}
	rest := entity.ReplaceAllString(anyTag.ReplaceAllString(s, ""), "")
	return !strings.ContainsAny(rest, "<>&")
}

func (f *Telegram) send(w http.ResponseWriter, r *http.Request, edit bool) {
	chat, text, mode := r.Form.Get("chat_id"), r.Form.Get("text"), r.Form.Get("parse_mode")
	visible := text
	if mode == "HTML" {
		if !checkHTML(text) {
			f.fail(w, 400, "Bad Request: can't parse entities", 0)
			return
		}
		visible = html.UnescapeString(anyTag.ReplaceAllString(text, ""))
	}
	if utf8.RuneCountInString(visible) > 4096 {
		f.fail(w, 400, "Bad Request: message is too long", 0)
		return
	}
	var kb struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	json.Unmarshal([]byte(r.Form.Get("reply_markup")), &kb)
	var buttons []SlackButton
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if len(b.CallbackData) > 64 {
				f.fail(w, 400, "Bad Request: BUTTON_DATA_INVALID", 0)
				return
			}
			buttons = append(buttons, SlackButton{Label: b.Text, Value: b.CallbackData})
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var m *TelegramMessage
	if edit {
		id, _ := strconv.ParseInt(r.Form.Get("message_id"), 10, 64)
		if m = f.messages[id]; m == nil || m.Chat != chat {
			f.fail(w, 400, "Bad Request: message to edit not found", 0)
			return
		}
		if m.Text == text && len(m.Buttons) == len(buttons) {
			f.fail(w, 400, "Bad Request: message is not modified", 0)
			return
		}
	}
	if retry := f.limit(chat); retry > 0 {
		f.fail(w, 429, "Too Many Requests: retry after "+strconv.Itoa(retry), retry)
		return
	}
	if edit {
		m.Text, m.ParseMode, m.Buttons = text, mode, buttons
		m.Edits++
		m.Edited = time.Now()
	} else {
		f.nextMsg++
		m = &TelegramMessage{Chat: chat, ID: f.nextMsg, ReplyTo: r.Form.Get("reply_to_message_id"), Text: text, ParseMode: mode, Buttons: buttons, Posted: time.Now()}
		f.messages[m.ID] = m
		f.order = append(f.order, m.ID)
	}
	f.reply(w, map[string]any{"message_id": m.ID, "chat": map[string]any{"id": chat}, "text": text})
}

// limit applies the per-chat bucket and the groups' 20 per minute; it
// returns the seconds to wait, 0 when the write may pass.
func (f *Telegram) limit(chat string) int {
	now := time.Now()
	if strings.HasPrefix(chat, "-") {
		var recent []time.Time
		for _, at := range f.groupSends[chat] {
			if now.Sub(at) < time.Minute {
				recent = append(recent, at)
			}
		}
		f.groupSends[chat] = recent
		if len(recent) >= 20 {
			f.violations++
			return 3
		}
	}
	b := f.buckets[chat]
	if b == nil {
		b = &bucket{tokens: float64(f.limits.Burst), at: now}
		f.buckets[chat] = b
	}
	b.tokens = min(float64(f.limits.Burst), b.tokens+now.Sub(b.at).Seconds()*f.limits.PerSecond)
	b.at = now
	if b.tokens < 1 {
		f.violations++
		return 1
	}
	b.tokens--
	f.groupSends[chat] = append(f.groupSends[chat], now)
	return 0
}

func (f *Telegram) push(u map[string]any) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextUpdate++
	u["update_id"] = f.nextUpdate
	f.updates = append(f.updates, u)
	close(f.wake)
	f.wake = make(chan struct{})
	return f.nextUpdate
}

func (f *Telegram) newMessageID() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextMsg++
	return f.nextMsg
}

// Send delivers a message from user in chat (negative ids are groups); a
// "@reasonix_bot" or "/cmd@reasonix_bot" in text gets its entity, and
// replyTo (0 for none) makes it a reply. It returns the message id.
func (f *Telegram) Send(chat, user int64, text string, replyTo int64) int64 {
	id := f.newMessageID()
	chatType := "private"
	if chat < 0 {
		chatType = "supergroup"
	}
	msg := map[string]any{
		"message_id": id, "date": time.Now().Unix(), "text": text,
		"from": map[string]any{"id": user, "is_bot": false, "first_name": f.FirstName(user)},
		"chat": map[string]any{"id": chat, "type": chatType},
	}
	var entities []map[string]any
	for _, word := range strings.Fields(text) {
		typ := ""
		switch {
		case strings.HasPrefix(word, "/"):
			typ = "bot_command"
		case strings.HasPrefix(word, "@"):
			typ = "mention"
		default:
			continue
		}
		off := utf16Len(text[:strings.Index(text, word)])
		entities = append(entities, map[string]any{"type": typ, "offset": off, "length": utf16Len(word)})
	}
	if entities != nil {
		msg["entities"] = entities
	}
	if replyTo != 0 {
		from := map[string]any{"id": user, "is_bot": false}
		f.mu.Lock()
		if _, ours := f.messages[replyTo]; ours {
			from = map[string]any{"id": TelegramBotID, "is_bot": true, "username": TelegramBotName}
		}
		f.mu.Unlock()
		msg["reply_to_message"] = map[string]any{"message_id": replyTo, "from": from, "chat": msg["chat"]}
	}
	f.push(map[string]any{"message": msg})
	return id
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// Click presses the button with data under message id in chat, as user.
// It returns the callback query id.
func (f *Telegram) Click(chat, user, messageID int64, data string) string {
	id := "cb" + strconv.FormatInt(f.newMessageID(), 10)
	f.push(map[string]any{"callback_query": map[string]any{
		"id": id, "from": map[string]any{"id": user, "is_bot": false, "first_name": f.FirstName(user)}, "data": data,
		"message": map[string]any{"message_id": messageID, "chat": map[string]any{"id": chat, "type": "private"}},
	}})
	return id
}

// Messages returns the bot's messages in chat, as they are now.
func (f *Telegram) Messages(chat int64) []TelegramMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := strconv.FormatInt(chat, 10)
	var out []TelegramMessage
	for _, id := range f.order {
		if m := f.messages[id]; m.Chat == c {
			out = append(out, *m)
		}
	}
	return out
}

// Answers lists the callback answers.
func (f *Telegram) Answers() []TelegramAnswer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]TelegramAnswer(nil), f.answers...)
}

// Confirmed is the highest offset a poll has asked for: every update below
// it is acknowledged.
func (f *Telegram) Confirmed() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.confirmed
}

// Polls lists the offset each getUpdates asked for, in order: how often
// the bot polled, and from where.
func (f *Telegram) Polls() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.polls...)
}

// LastUpdate is the id of the newest update (Send, Click), 0 before any.
func (f *Telegram) LastUpdate() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.updates) == 0 {
		return 0
	}
	return f.nextUpdate
}

// Violations counts writes refused for exceeding the limits.
func (f *Telegram) Violations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.violations
}

// Webhooks lists the accepted setWebhook calls.
func (f *Telegram) Webhooks() []TelegramWebhook {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]TelegramWebhook(nil), f.webhooks...)
}

// FailSetWebhook makes the next n setWebhook calls fail, as an outage would.
func (f *Telegram) FailSetWebhook(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failHooks = n
}
