// Package layering holds no code: its test enforces the package map of the
// design guide, so an import that breaks the layering fails the build's tests
// instead of surviving in prose. Beside it, sleep_test.go enforces the guide's
// testing rule that tests wait on signals: a fixed time.Sleep in a test file
// fails unless it is listed, with its reason, in sleepAllowed.
package layering
