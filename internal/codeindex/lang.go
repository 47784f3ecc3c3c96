package codeindex

import (
	"path"
	"strings"
)

// language is how the line scanner reads one language: the words that
// open a declaration (and the kind each declares), the words that may
// precede them, and a few per-family habits.
type language struct {
	name      string
	keywords  map[string]string // declaration word → kind
	modifiers map[string]bool   // words skipped before a declaration word
	comments  []string          // line comment prefixes
	// blockComments: /* … */ spans lines.
	blockComments bool
	// callables: a member line "[modifiers] [type] name(…)" declares a
	// function, as in C, Java, C# and JavaScript classes.
	callables bool
	// bindings: a top-level "const f = (…) =>" declares a function, as
	// in JavaScript.
	bindings bool
	// docstrings: Python's triple-quoted strings hide their lines.
	docstrings bool
	// shell: "name() {" declares a function.
	shell bool
	// headings: Markdown's # lines are the symbols.
	headings bool
	// goParser: Go files are read with go/parser instead.
	goParser bool
}

// scan lists the symbols of one file.
func (l *language) scan(rel string, src []byte) []Symbol {
	if l.goParser {
		return scanGo(rel, src)
	}
	return scanLines(l, rel, src)
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(s) {
		m[w] = true
	}
	return m
}

func kinds(pairs ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		for w := range strings.FieldsSeq(pairs[i]) {
			m[w] = pairs[i+1]
		}
	}
	return m
}

var (
	slashes = []string{"//"}
	hashes  = []string{"#"}

	langGo = &language{name: "go", goParser: true}
	langPy = &language{name: "python", keywords: kinds("def", "func", "class", "class"),
		modifiers: words("async"), comments: hashes, docstrings: true}
	langJS = &language{name: "javascript",
		keywords:  kinds("function", "func", "class", "class", "interface", "interface", "type", "type", "enum", "enum", "namespace module", "module"),
		modifiers: words("export default async static declare abstract public private protected readonly get set override"),
		comments:  slashes, blockComments: true, callables: true, bindings: true}
	langRust = &language{name: "rust",
		keywords:  kinds("fn", "func", "struct", "struct", "enum", "enum", "trait", "trait", "mod", "module", "type", "type", "const static", "const", "union", "struct", "macro_rules", "macro", "impl", "impl"),
		modifiers: words("pub async unsafe extern const default"), comments: slashes, blockComments: true}
	langJava = &language{name: "java",
		keywords:  kinds("class", "class", "interface @interface", "interface", "enum", "enum", "record", "class"),
		modifiers: words("public private protected static final abstract synchronized native default sealed non-sealed strictfp transient"),
		comments:  slashes, blockComments: true, callables: true}
	langCS = &language{name: "csharp",
		keywords:  kinds("class", "class", "struct", "struct", "interface", "interface", "enum", "enum", "record", "class", "namespace", "module"),
		modifiers: words("public private protected internal static sealed abstract partial async override virtual readonly unsafe extern new"),
		comments:  slashes, blockComments: true, callables: true}
	langKotlin = &language{name: "kotlin",
		keywords:  kinds("fun", "func", "class", "class", "interface", "interface", "object", "class", "typealias", "type"),
		modifiers: words("public private protected internal open override abstract final data sealed enum annotation inner suspend inline operator infix tailrec external companion value"),
		comments:  slashes, blockComments: true}
	langSwift = &language{name: "swift",
		keywords:  kinds("func", "func", "class", "class", "struct", "struct", "enum", "enum", "protocol", "interface", "extension", "impl", "typealias", "type"),
		modifiers: words("public private fileprivate internal open static final override mutating convenience required indirect"),
		comments:  slashes, blockComments: true}
	langScala = &language{name: "scala",
		keywords:  kinds("def", "func", "class", "class", "object", "class", "trait", "trait", "type", "type"),
		modifiers: words("case private protected override final abstract sealed implicit lazy"),
		comments:  slashes, blockComments: true}
	langC = &language{name: "c",
		keywords:  kinds("struct", "struct", "class", "class", "union", "struct", "enum", "enum", "namespace", "module"),
		modifiers: words("typedef static inline extern export template virtual"),
		comments:  slashes, blockComments: true, callables: true}
	langRuby = &language{name: "ruby", keywords: kinds("def", "func", "class", "class", "module", "module"),
		modifiers: words("private protected public"), comments: hashes}
	langPHP = &language{name: "php",
		keywords:  kinds("function", "func", "class", "class", "interface", "interface", "trait", "trait", "enum", "enum"),
		modifiers: words("public private protected static abstract final readonly"), comments: []string{"//", "#"}, blockComments: true}
	langLua   = &language{name: "lua", keywords: kinds("function", "func"), modifiers: words("local"), comments: []string{"--"}}
	langShell = &language{name: "shell", keywords: kinds("function", "func"), comments: hashes, shell: true}
	langMD    = &language{name: "markdown", headings: true}
)

// byExt maps a file extension to its language.
var byExt = map[string]*language{
	".go": langGo, ".py": langPy, ".pyi": langPy,
	".js": langJS, ".jsx": langJS, ".mjs": langJS, ".cjs": langJS, ".ts": langJS, ".tsx": langJS, ".mts": langJS, ".cts": langJS,
	".rs": langRust, ".java": langJava, ".cs": langCS, ".kt": langKotlin, ".kts": langKotlin, ".swift": langSwift,
	".scala": langScala, ".c": langC, ".h": langC, ".cc": langC, ".cpp": langC, ".cxx": langC, ".hpp": langC, ".hh": langC,
	".rb": langRuby, ".php": langPHP, ".lua": langLua, ".sh": langShell, ".bash": langShell, ".md": langMD,
}

// languageOf is the language of a file name, nil for a file not indexed.
func languageOf(name string) *language {
	return byExt[strings.ToLower(path.Ext(name))]
}
