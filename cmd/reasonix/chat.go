package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"reasonix/bot"
	"reasonix/bot/relay"
	"reasonix/bot/slack"
	"reasonix/bot/telegram"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/store"
)

// chatTokens are the chat platforms' secrets, read once at start so the
// service can redact them everywhere before anything runs.
type chatTokens struct {
	slackBot, slackApp string
	telegram           string
}

func (c chatTokens) secrets() []string {
	var out []string
	for _, s := range []string{c.slackBot, c.slackApp, c.telegram} {
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
	var tok chatTokens
	env := func(key, name string) (string, error) {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			return "", &configError{fmt.Errorf("%s names $%s, which is not set", key, name)}
		}
		return v, nil
	}
	var err error
	if s := cfg.Bot.Slack; s.Enabled {
		if s.SlackMode() != config.SlackSocket {
			return tok, &configError{fmt.Errorf("bot.slack.mode = %q is not supported yet; use \"socket\"", s.Mode)}
		}
		if tok.slackBot, err = env("bot.slack.bot_token_env", s.BotTokenEnv); err != nil {
			return tok, err
		}
		if tok.slackApp, err = env("bot.slack.app_token_env", s.AppTokenEnv); err != nil {
			return tok, err
		}
	}
	if tg := cfg.Bot.Telegram; tg.Enabled {
		if tg.TelegramMode() != config.TelegramPoll {
			return tok, &configError{fmt.Errorf("bot.telegram.mode = %q is not supported yet; use \"poll\"", tg.Mode)}
		}
		if tok.telegram, err = env("bot.telegram.token_env", tg.TokenEnv); err != nil {
			return tok, err
		}
	}
	return tok, nil
}

// chatRelay assembles the relay of the enabled transports; nil when none
// is enabled.
func chatRelay(cfg *config.Config, tok chatTokens, svc *runner.Service, st *store.Store, log *slog.Logger) (*relay.Relay, error) {
	var transports []bot.Transport
	if s := cfg.Bot.Slack; s.Enabled {
		t, err := slack.New(slack.Config{BotToken: tok.slackBot, AppToken: tok.slackApp, APIURL: s.APIURL, AckReaction: s.AckReaction, Logger: log})
		if err != nil {
			return nil, err
		}
		transports = append(transports, t)
	}
	if tg := cfg.Bot.Telegram; tg.Enabled {
		t, err := telegram.New(telegram.Config{Token: tok.telegram, APIEndpoint: tg.APIEndpoint, Cursor: st, Logger: log})
		if err != nil {
			return nil, err
		}
		transports = append(transports, t)
	}
	if len(transports) == 0 {
		return nil, nil
	}
	return relay.New(relay.Config{Service: svc, Store: st, Bot: cfg.Bot, Transports: transports, Secrets: tok.secrets(), Logger: log})
}
