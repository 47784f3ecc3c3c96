package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot/bottest"
)

// slackConfig enables the Slack relay against the fake.
func slackConfig(fake *bottest.Slack) string {
	return fmt.Sprintf(`
[bot.slack]
enabled = true
bot_token_env = "SLACK_BOT_TOKEN"
app_token_env = "SLACK_APP_TOKEN"
api_url = %q
allow_users = ["UALICE", "UBOB"]
allow_channels = ["C0DEV"]
approvers = ["UALICE", "UBOB"]
`, fake.APIURL())
}

var slackEnv = []string{"SLACK_BOT_TOKEN=xoxb-e2e-bot-secret", "SLACK_APP_TOKEN=xapp-e2e-app-secret"}

// The centrepiece, through the built binary: a mention becomes a
// task, its risky call an approval with buttons in the thread; the
// requester's own click is refused, an approver's Allow runs exactly that
// call, and the report lands in the thread. A Slack retry and a
// redelivery after a restart start nothing.
func TestServeSlackMentionApprovalReport(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"proof please": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("result: " + strings.TrimSpace(res) + " <!here>")
			}
			return toolTurn(call("a1", "bash", `{"command":"echo slack-approved > proof.txt && cat proof.txt"}`))
		},
	})...)
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	e.configure(slackConfig(fake))
	s := e.serve(t, slackEnv...)
	// The start-up summary names the bot as Slack knows it, and the rest.
	s.waitFor(func() bool { return strings.Contains(s.stdout.String(), "  node ") }, "the start-up summary")
	for _, want := range []string{"  chat        Slack connected as @reasonix (Socket Mode; answers in 1 channel,", "  dashboard   http://",
		"  workspaces  none"} {
		if !strings.Contains(s.stdout.String(), want) {
			t.Errorf("the start-up summary lacks %q:\n%s", want, s.stdout.String())
		}
	}

	mention := fake.Mention("UALICE", "C0DEV", "", "proof please")
	var ap bottest.SlackMessage
	s.waitFor(func() bool {
		for _, m := range fake.Thread("C0DEV", mention.TS) {
			if len(m.Buttons) > 0 {
				ap = m
				return true
			}
		}
		return false
	}, "the approval buttons in the thread")
	if !strings.Contains(ap.Text, "echo slack-approved") {
		t.Fatalf("approval message: %+v", ap)
	}
	fake.Redeliver(mention, 1) // Slack's retry

	fake.Click("UALICE", "C0DEV", ap.TS, ap.Buttons[0].Value)
	s.waitFor(func() bool { return len(fake.Ephemerals()) == 1 }, "the requester's refusal")
	if got := fake.Ephemerals()[0]; got.User != "UALICE" || !strings.Contains(got.Text, "You asked for this task; another approver must decide") {
		t.Errorf("requester's click answer: %+v", got)
	}
	fake.Click("UBOB", "C0DEV", ap.TS, ap.Buttons[0].Value)

	var report string
	s.waitFor(func() bool {
		for _, m := range fake.Thread("C0DEV", mention.TS) {
			if strings.Contains(m.Text, "result: slack-approved") {
				report = m.Text
				return true
			}
		}
		return false
	}, "the final report in the thread")
	if strings.Contains(report, "<!here>") {
		t.Errorf("the report pings the channel: %q", report)
	}
	var list struct{ Tasks []task }
	s.call("GET", "/api/v1/tasks", nil, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].State != "succeeded" {
		t.Fatalf("tasks = %+v", list.Tasks)
	}
	id := list.Tasks[0].ID
	s.waitFor(func() bool {
		msgs := fake.Thread("C0DEV", mention.TS)
		return len(msgs) > 0 && strings.Contains(msgs[0].Text, "Task "+id) && strings.Contains(msgs[0].Text, "— done")
	}, "the status message to show the end")
	s.waitFor(func() bool {
		for _, m := range fake.Messages() {
			if m.TS == ap.TS {
				return len(m.Buttons) == 0 && strings.Contains(m.Text, "Allowed once by "+bottest.SlackRealName("UBOB")) && !strings.Contains(m.Text, "slack:")
			}
		}
		return false
	}, "the approval message to name its decider")
	for _, m := range fake.Messages() {
		if strings.Contains(m.Text, "xoxb-e2e-bot-secret") || strings.Contains(m.Text, "sk-secret-test-key") {
			t.Errorf("a secret was posted: %q", m.Text)
		}
	}

	// Restart; the same delivery again starts nothing.
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
	posted := len(fake.Messages())
	s = e.serve(t, slackEnv...)
	_, acked := fake.Envelopes(mention.ID)
	fake.Redeliver(mention, 2)
	// Slack mode records a delivery, then acknowledges it: once the
	// redelivery is acknowledged the relay has looked it up among the
	// recorded ones, and had it taken it for new, its handling would be
	// queued by then. A help command sent after it is queued after it, and
	// the workers take the queue in order: once help is answered, a
	// duplicate's handling has started, and submitting its task comes first.
	s.waitFor(func() bool { _, n := fake.Envelopes(mention.ID); return n == acked+1 }, "the redelivery to be acknowledged")
	help := fake.Mention("UALICE", "C0DEV", "", "help")
	s.waitFor(func() bool { return len(fake.Thread("C0DEV", help.TS)) > 0 }, "the answer to help")
	s.call("GET", "/api/v1/tasks", nil, &list)
	if len(list.Tasks) != 1 {
		t.Errorf("after a redelivery across a restart: %d tasks", len(list.Tasks))
	}
	for _, m := range fake.Messages()[posted:] {
		if m.ThreadTS != help.TS {
			t.Errorf("the restart re-posted: %+v", m)
		}
	}
	if n := fake.Violations(); n != 0 {
		t.Errorf("%d Slack rate limit violations", n)
	}
}

// An enabled transport without its token or allow lists refuses to start
// (exit 2), naming the key.
func TestServeRefusesAnIncompleteSlackConfig(t *testing.T) {
	e := newE2E(t)
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	e.configure(slackConfig(fake))
	_, stderr, code := e.run("serve", "--addr", "127.0.0.1:0")
	if code != 2 || !strings.Contains(stderr, "bot.slack.bot_token_env") {
		t.Errorf("without the token: exit %d\n%s", code, stderr)
	}
	e.configure(strings.Replace(slackConfig(fake), `allow_users = ["UALICE", "UBOB"]`, "allow_users = []", 1))
	e.extra = append(e.extra, slackEnv...)
	_, stderr, code = e.run("serve", "--addr", "127.0.0.1:0")
	if code != 2 || !strings.Contains(stderr, "bot.slack.allow_users") {
		t.Errorf("with no allowed users: exit %d\n%s", code, stderr)
	}
}

// Telegram through the built binary: a DM becomes a task, an approver's
// button runs the call, the report arrives as escaped HTML.
func TestServeTelegramDMApprovalReport(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"tg proof": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("result: " + strings.TrimSpace(res) + " <i>")
			}
			return toolTurn(call("a1", "bash", `{"command":"echo tg-approved > proof.txt && cat proof.txt"}`))
		},
	})...)
	fake := bottest.NewTelegram(t, "4242:e2e-telegram-secret", bottest.SlackLimits{})
	e.configure(fmt.Sprintf(`
[bot.telegram]
enabled = true
token_env = "TELEGRAM_BOT_TOKEN"
api_endpoint = %q
allow_users = ["111", "222"]
allow_chats = ["-100"]
approvers = ["222"]
`, fake.Endpoint()))
	s := e.serve(t, "TELEGRAM_BOT_TOKEN=4242:e2e-telegram-secret")
	s.waitFor(func() bool {
		return strings.Contains(s.stdout.String(), "Telegram connected as @"+bottest.TelegramBotName+" (long polling; answers in 1 channel, 2 users)")
	}, "the start-up summary naming the Telegram bot")
	fake.Send(111, 111, "tg proof", 0)
	var ap bottest.TelegramMessage
	s.waitFor(func() bool {
		for _, m := range fake.Messages(111) {
			if len(m.Buttons) > 0 {
				ap = m
				return true
			}
		}
		return false
	}, "the approval buttons")
	fake.Click(111, 222, ap.ID, ap.Buttons[0].Value)
	defer func() {
		if t.Failed() {
			t.Logf("answers: %+v\nmessages: %+v", fake.Answers(), fake.Messages(111))
		}
	}()
	s.waitFor(func() bool {
		for _, m := range fake.Messages(111) {
			if strings.Contains(m.Text, "result: tg-approved") && strings.Contains(m.Text, "&lt;i&gt;") {
				return true
			}
		}
		return false
	}, "the report")
	for _, m := range fake.Messages(111) {
		if strings.Contains(m.Text, "e2e-telegram-secret") {
			t.Errorf("the token was posted: %q", m.Text)
		}
	}
}

func slackSigned(t *testing.T, url, secret string, at time.Time, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":" + body))
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Slack's HTTP mode on the service's address: signed requests only
// (valid, stale, wrong), then the whole flow over HTTP.
func TestServeSlackHTTPMode(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"http proof": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("result: " + strings.TrimSpace(res))
			}
			return toolTurn(call("a1", "bash", `{"command":"echo http-approved > p.txt && cat p.txt"}`))
		},
	})...)
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	e.configure(strings.Replace(slackConfig(fake), `app_token_env = "SLACK_APP_TOKEN"`, "mode = \"http\"\nsigning_secret_env = \"SLACK_SIGNING_SECRET\"", 1))
	s := e.serve(t, "SLACK_BOT_TOKEN=xoxb-e2e", "SLACK_SIGNING_SECRET=e2e-signing")
	event := `{"type":"event_callback","team_id":"` + bottest.SlackTeam + `","event_id":"EvHTTP1","event":{"type":"app_mention","user":"UALICE","text":"<@UBOT> http proof","channel":"C0DEV","ts":"1800000000.000001"}}`
	if code := slackSigned(t, s.url+"/slack/events", "e2e-signing", time.Now().Add(-10*time.Minute), event); code != 401 {
		t.Errorf("stale signature: %d", code)
	}
	if code := slackSigned(t, s.url+"/slack/events", "wrong", time.Now(), event); code != 401 {
		t.Errorf("wrong signature: %d", code)
	}
	var list struct{ Tasks []task }
	s.call("GET", "/api/v1/tasks", nil, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("an unsigned request started %d tasks", len(list.Tasks))
	}
	for range 2 { // Slack's retry is deduped
		if code := slackSigned(t, s.url+"/slack/events", "e2e-signing", time.Now(), event); code != 200 {
			t.Fatalf("valid signature: %d", code)
		}
	}
	var ap bottest.SlackMessage
	s.waitFor(func() bool {
		for _, m := range fake.Messages() {
			if len(m.Buttons) > 0 {
				ap = m
				return true
			}
		}
		return false
	}, "the approval")
	payload := fmt.Sprintf(`{"type":"block_actions","team":{"id":%q},"user":{"id":"UBOB"},"channel":{"id":"C0DEV"},"container":{"message_ts":%q,"channel_id":"C0DEV"},"actions":[{"value":%q}]}`,
		bottest.SlackTeam, ap.TS, ap.Buttons[0].Value)
	form := url.Values{"payload": {payload}}.Encode()
	if code := slackSigned(t, s.url+"/slack/interactions", "e2e-signing", time.Now(), form); code != 200 {
		t.Fatalf("click: %d", code)
	}
	s.waitFor(func() bool {
		for _, m := range fake.Messages() {
			if strings.Contains(m.Text, "result: http-approved") {
				return true
			}
		}
		return false
	}, "the report")
	s.call("GET", "/api/v1/tasks", nil, &list)
	if len(list.Tasks) != 1 {
		t.Errorf("%d tasks after a retried event", len(list.Tasks))
	}
}

// Telegram's webhook on the service's address checks its secret header.
func TestServeTelegramWebhookSecret(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"hook hello": func(req agenttest.Request) agenttest.Turn { return answer("hello back") },
	})...)
	fake := bottest.NewTelegram(t, "5:hook-token", bottest.SlackLimits{})
	e.configure(fmt.Sprintf(`
[serve]
public_url = "https://reasonix.example/"

[bot.telegram]
enabled = true
token_env = "TELEGRAM_BOT_TOKEN"
mode = "webhook"
webhook_secret_env = "TELEGRAM_WEBHOOK_SECRET"
api_endpoint = %q
allow_users = ["111"]
allow_chats = ["-100"]
approvers = ["222"]
`, fake.Endpoint()))
	s := e.serve(t, "TELEGRAM_BOT_TOKEN=5:hook-token", "TELEGRAM_WEBHOOK_SECRET=hook-secret")
	update := `{"update_id":77,"message":{"message_id":5,"from":{"id":111},"chat":{"id":111,"type":"private"},"text":"hook hello"}}`
	post := func(secret string) int {
		req, _ := http.NewRequest("POST", s.url+"/telegram/webhook", strings.NewReader(update))
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(""); code != 403 {
		t.Errorf("missing secret: %d", code)
	}
	if code := post("wrong"); code != 403 {
		t.Errorf("wrong secret: %d", code)
	}
	if code := post("hook-secret"); code != 200 {
		t.Fatalf("right secret: %d", code)
	}
	post("hook-secret") // a redelivery
	var report string
	s.waitFor(func() bool {
		for _, m := range fake.Messages(111) {
			if strings.Contains(m.Text, "hello back") {
				report = m.Text
				return true
			}
		}
		return false
	}, "the report")
	// serve registered its webhook itself, at public_url, with the secret,
	// and its posts link to the task there.
	want := bottest.TelegramWebhook{URL: "https://reasonix.example/telegram/webhook", SecretToken: "hook-secret", AllowedUpdates: `["message","callback_query"]`}
	if hooks := fake.Webhooks(); len(hooks) != 1 || hooks[0] != want {
		t.Errorf("setWebhook calls = %+v, want one %+v", hooks, want)
	}
	if !strings.Contains(report, "https://reasonix.example/tasks/t_") {
		t.Errorf("the report does not link to its task:\n%s", report)
	}
	var list struct{ Tasks []task }
	s.call("GET", "/api/v1/tasks", nil, &list)
	if len(list.Tasks) != 1 {
		t.Errorf("%d tasks, want 1", len(list.Tasks))
	}
}
