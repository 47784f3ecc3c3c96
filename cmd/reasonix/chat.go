package main

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"reasonix/bot"
	"reasonix/bot/relay"
	"reasonix/bot/slack"
	"reasonix/bot/telegram"
	"reasonix/config"
	"reasonix/internal/intakebudget"
	"reasonix/internal/secretenv"
	"reasonix/runner"
	"reasonix/runner/store"
)

// chatTokens are the chat platforms' secrets, read once at start so the
// service can redact them everywhere before anything runs.
type chatTokens struct {
	slackBot, slackApp, slackSigning string
	telegram, telegramWebhook        string
}

func (c chatTokens) secrets() []string {
	var out []string
	for _, s := range []string{c.slackBot, c.slackApp, c.slackSigning, c.telegram, c.telegramWebhook} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// readChatTokens reads the variables the enabled transports name. A
// missing one is a configuration error (exit 2) naming the key: a relay
// that cannot connect must not look like a running one.
func readChatTokens(cfg *config.Config) (chatTokens, error) {
	var (
		tok  chatTokens
		errs []error
	)
	// Every missing variable is reported, not just the first: set them
	// all and start once.
	env := func(key, name string) string {
		v := strings.TrimSpace(secretenv.Getenv(name))
		if v == "" {
			errs = append(errs, fmt.Errorf("%s names $%s, which is not set", key, name))
		}
		return v
	}
	if s := cfg.Bot.Slack; s.Enabled {
		tok.slackBot = env("bot.slack.bot_token_env", s.BotTokenEnv)
		if s.SlackMode() == config.SlackHTTP {
			tok.slackSigning = env("bot.slack.signing_secret_env", s.SigningSecretEnv)
		} else {
			tok.slackApp = env("bot.slack.app_token_env", s.AppTokenEnv)
		}
	}
	if tg := cfg.Bot.Telegram; tg.Enabled {
		tok.telegram = env("bot.telegram.token_env", tg.TokenEnv)
		if tg.TelegramMode() == config.TelegramWebhook {
			tok.telegramWebhook = env("bot.telegram.webhook_secret_env", tg.WebhookSecretEnv)
		}
	}
	if len(errs) > 0 {
		return tok, &configError{errors.Join(errs...)}
	}
	return tok, nil
}

// chatRelay assembles the relay of the enabled transports (nil when none
// is) and the HTTP routes of those in HTTP or webhook mode, to be served
// on the service's address.
//
// selves are the transports as the start-up summary names them (their
// handles are known once the relay has started them).
func chatRelay(cfg *config.Config, tok chatTokens, svc *runner.Service, st *store.Store, intake *intakebudget.Budget, log *slog.Logger) (r *relay.Relay, routes map[string]http.Handler, selves []chatSelf, err error) {
	var transports []bot.Transport
	routes = map[string]http.Handler{}
	if s := cfg.Bot.Slack; s.Enabled {
		t, err := slack.New(slack.Config{BotToken: tok.slackBot, AppToken: tok.slackApp, SigningSecret: tok.slackSigning,
			APIURL: s.APIURL, AckReaction: s.AckReaction, SlashCommand: s.Slash(), Logger: log, IntakeBudget: intake})
		if err != nil {
			return nil, nil, nil, err
		}
		transports, selves = append(transports, t), append(selves, t)
		if tok.slackSigning != "" {
			routes["/slack/"] = t.Handler()
		}
	}
	if tg := cfg.Bot.Telegram; tg.Enabled {
		path := cmp.Or(tg.WebhookPath, "/telegram/webhook")
		hookURL := "" // registered with setWebhook when the public URL is known
		if base := cfg.Serve.BaseURL(); base != "" && tok.telegramWebhook != "" {
			hookURL = base + path
		}
		// Nodes sharing the store take turns at long polling by lease.
		t, err := telegram.New(telegram.Config{Token: tok.telegram, APIEndpoint: tg.APIEndpoint, Cursor: st,
			Lease: st, Node: svc.Node(), WebhookSecret: tok.telegramWebhook, WebhookURL: hookURL, Logger: log, IntakeBudget: intake})
		if err != nil {
			return nil, nil, nil, err
		}
		transports, selves = append(transports, t), append(selves, t)
		if tok.telegramWebhook != "" {
			routes[path] = t.Handler()
		}
	}
	if len(transports) == 0 {
		return nil, nil, nil, nil
	}
	r, err = relay.New(relay.Config{Service: svc, Store: st, Bot: cfg.Bot, Transports: transports, Secrets: tok.secrets(),
		PublicURL: cfg.Serve.BaseURL(), StallAfter: cfg.Runner.StallAfter, Logger: log})
	return r, routes, selves, err
}

// withChatRoutes serves the chat platforms' callbacks beside the API.
func withChatRoutes(api http.Handler, routes map[string]http.Handler) http.Handler {
	if len(routes) == 0 {
		return api
	}
	mux := http.NewServeMux()
	for path, h := range routes {
		mux.Handle(path, h)
	}
	mux.Handle("/", api)
	return mux
}
