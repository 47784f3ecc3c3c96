// Package telegram is the Telegram transport of the chat relay: long
// polling intake with a durable offset, HTML-formatted posts and edits,
// inline keyboard buttons. github.com/go-telegram-bot-api/telegram-bot-api/v5
// carries the requests; updates are parsed by our own fuzzed parser, and
// methods are called with raw parameters (the library predates several).
package telegram
