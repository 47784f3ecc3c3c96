// Package codeindex lists the symbols (functions, methods, types, classes,
// constants…) declared in a source tree, for the code_index tool. Go files
// are read with go/parser (syntax only, no type checking); other languages
// by a small line scanner that knows each language's declaration keywords —
// approximate by design, pure Go, no grammar files and no cgo.
//
// An Index belongs to one directory tree and remembers each file's symbols
// with the file's size and modification time: a refresh rescans only the
// files that changed. For returns the shared Index of a tree.
package codeindex
