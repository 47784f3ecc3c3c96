package telegram

import (
	"context"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"reasonix/bot"
	"reasonix/internal/backoff"
)

// registerWebhook tells Telegram where to deliver updates and which secret
// to send with them. The library (v5.5.1) predates secret_token, so the
// call goes through raw params. It runs in the background and retries: a
// Telegram outage at start delays chat intake but does not stop serve.
func (t *Transport) registerWebhook(ctx context.Context) {
	params := tgbotapi.Params{
		"url":             t.cfg.WebhookURL,
		"secret_token":    t.cfg.WebhookSecret,
		"allowed_updates": `["message","callback_query"]`,
	}
	policy := backoff.Policy{Base: time.Second, Cap: time.Minute}
	for attempt := 0; ; attempt++ {
		_, err := t.call(ctx, "setWebhook", params)
		if err == nil {
			t.log.Info("telegram: webhook registered", "url", t.cfg.WebhookURL)
			return
		}
		if ctx.Err() != nil {
			return
		}
		d, _ := bot.RetryAfter(err)
		t.log.Warn("telegram: registering the webhook failed; retrying", "url", t.cfg.WebhookURL, "err", redactToken(err.Error(), t.cfg.Token))
		if backoff.Sleep(ctx, policy.Delay(attempt, d)) != nil {
			return
		}
	}
}
