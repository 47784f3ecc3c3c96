// Package bottest fakes the chat platforms' servers for tests: the real
// client libraries talk to them on loopback. The fakes record what was
// posted, edited, reacted and answered, inject deliveries and clicks, and
// enforce the platforms' rate limits (answering 429 with Retry-After beyond
// them, and counting every violation). Import it only from _test.go files.
package bottest
