// Package slack is the Slack transport of the chat relay: Socket Mode
// intake (no public endpoint), Web API posts and edits, Block Kit buttons.
// The payloads Slack sends are parsed here into bot.Inbound and bot.Click
// by our own small parsers, which are fuzzed: they are the edge where
// untrusted input enters.
package slack
