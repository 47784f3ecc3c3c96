// Package layering holds no code: its test enforces the package map of the
// design guide, so an import that breaks the layering fails the build's tests
// instead of surviving in prose.
package layering
