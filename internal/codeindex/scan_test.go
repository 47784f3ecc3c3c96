package codeindex

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// show renders symbols as "line kind Container.Name" for comparison.
func show(syms []Symbol) []string {
	var out []string
	for _, s := range syms {
		out = append(out, fmt.Sprintf("%d %s %s", s.Line, s.Kind, s.Qualified()))
	}
	return out
}

func TestScannerFindsDeclarations(t *testing.T) {
	cases := []struct {
		file, src string
		want      []string
	}{
		{"a.go", "package a\n\ntype T struct{}\n\ntype I interface {\n\tM() int\n}\n\nfunc (t *T) Get() {}\n\nfunc F[K any]() {}\n\nconst (\n\tA = 1\n\t_ = 2\n)\n\nvar V, W int\n",
			[]string{"3 struct T", "6 method I.M", "5 interface I", "9 method T.Get", "11 func F", "14 const A", "18 var V", "18 var W"}},
		{"a.py", "import os\n\nclass Shape(Base):\n    \"\"\"A shape.\n\n    def not_this(self): pass\n    \"\"\"\n    def area(self):\n        def inner(): pass\n        return 0\n\n    @property\n    async def name(self):\n        pass\n\ndef top(x):\n    # def commented(): pass\n    return x\n",
			[]string{"3 class Shape", "8 method Shape.area", "9 method Shape.inner", "13 method Shape.name", "16 func top"}},
		{"a.ts", "import x from 'y'\n\nexport interface Opts { a: string }\nexport type ID = string\nexport const handler = async (req) => {\n  return 1\n}\nconst LIMIT = 10\n/* function hidden() {\n*/\nexport default class Server extends Base {\n  private port: number;\n  constructor(port) {\n    if (port) {\n    }\n  }\n  async start(): Promise<void> {\n    this.listen(1)\n  }\n}\nfunction helper(a, b) {\n  describe(\"x\", () => {})\n}\ndescribe(\"y\", () => {})\n",
			[]string{"3 interface Opts", "4 type ID", "5 func handler", "8 const LIMIT", "11 class Server", "13 method Server.constructor", "17 method Server.start", "21 func helper"}},
		{"a.rs", "pub struct Point { x: i32 }\n\nimpl<T: Clone> Display for Point {\n    pub(crate) fn fmt(&self) -> String {\n        let f = |x| x;\n    }\n}\n\npub async fn run() {}\nmacro_rules! square {\n}\npub trait Shape {}\nmod tests {\n    fn helper() {}\n}\n",
			[]string{"1 struct Point", "4 method Point.fmt", "9 func run", "10 macro square", "12 trait Shape", "13 module tests", "14 method tests.helper"}},
		{"A.java", "package x;\n\n@Entity\npublic class Account {\n    private int n = compute();\n    public Account(int n) {\n        this.n = n;\n    }\n    public static void main(String[] args) {\n        if (args.length > 0) {\n        }\n        return;\n    }\n}\n",
			[]string{"4 class Account", "6 method Account.Account", "9 method Account.main"}},
		{"a.c", "#include <stdio.h>\n#define MAX 10\nstruct node {\n    int v;\n};\nstatic int add(int a, int b)\n{\n    return a + b;\n}\nint main(void) {\n    printf(\"%d\", add(1, 2));\n}\nint proto(int);\nvoid Foo::bar() {}\n",
			[]string{"2 macro MAX", "3 struct node", "6 func add", "10 func main", "14 method Foo.bar"}},
		{"a.rb", "module Billing\n  class Invoice\n    def self.build\n    end\n    def total\n    end\n  end\nend\n",
			[]string{"1 module Billing", "2 class Billing.Invoice", "3 method Invoice.build", "5 method Invoice.total"}},
		{"a.sh", "#!/bin/sh\nlog() {\n  echo \"$@\"\n}\nfunction die {\n  exit 1\n}\n", []string{"2 func log", "5 func die"}},
		{"a.md", "# Title\n\n## Usage\n\n```sh\n# not a heading\n```\n#### too deep\n", []string{"1 heading Title", "3 heading Usage"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got := show(languageOf(c.file).scan(c.file, []byte(c.src)))
			if !slices.Equal(got, c.want) {
				t.Errorf("symbols of %s:\n got %q\nwant %q", c.file, got, c.want)
			}
		})
	}
}

// FuzzScanLines: the line scanner never panics, and every symbol it
// reports has a name of valid UTF-8 on one line, a known kind and a line
// number inside the file.
func FuzzScanLines(f *testing.F) {
	for _, s := range []string{
		"class A:\n    def f(self): pass\n", "impl<<<>> for ::\n", "pub(crate", "extern \"C", "#define", "fn \xff\xfe()",
		"/*\n", "\"\"\"\n", "```\n# x\n", "  a::b::(\n", "const x = () =>", "function*gen(){}", "def self.", "module.\n",
		strings.Repeat("class A {\n", 100), "\r\n\r\n", "#", "####### x", "impl", "type", "a() {",
	} {
		for _, ext := range []string{".py", ".ts", ".rs", ".java", ".c", ".rb", ".sh", ".md", ".lua", ".kt", ".php"} {
			f.Add(ext, s)
		}
	}
	f.Fuzz(func(t *testing.T, ext, src string) {
		l := languageOf("x" + ext)
		if l == nil || l.goParser {
			return
		}
		lines := strings.Count(src, "\n") + 1
		for _, s := range l.scan("x"+ext, []byte(src)) {
			if s.Name == "" || !utf8.ValidString(s.Name) || strings.ContainsAny(s.Name, "\n\r") {
				t.Errorf("bad name %q", s.Name)
			}
			if !containerKinds[s.Kind] && !slices.Contains([]string{"func", "method", "type", "const", "var", "macro", "heading"}, s.Kind) || s.Kind == "impl" {
				t.Errorf("kind %q", s.Kind)
			}
			if s.Line < 1 || s.Line > lines {
				t.Errorf("line %d of %d", s.Line, lines)
			}
		}
	})
}
