// Package bot is the chat relay's contract: what a chat platform
// (Transport) must do for the relay, what it hands the relay (Inbound,
// Click), the button data it carries, and the text helpers every platform
// shares. The relay itself lives in bot/relay; the platforms in bot/slack
// and bot/telegram; fakes of the platforms' servers in bot/bottest.
//
// The split keeps this package free of the store: a platform only needs
// to know how to receive, post and edit.
package bot
