package builtin

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToMarkdown renders an HTML page as Markdown-like text for a model:
// the title, headings as #, paragraphs and line breaks, list items as -,
// links as [text](href), pre blocks fenced, and nothing of scripts,
// styles, forms' internals or hidden templates. It never fails: a parse
// problem leaves what could be read.
func htmlToMarkdown(body []byte) string {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	w := &mdWriter{}
	w.node(doc)
	return strings.TrimSpace(collapseBlankLines(w.b.String())) + "\n"
}

type mdWriter struct {
	b     strings.Builder
	pre   int // depth inside <pre>
	list  int // depth inside lists
	title bool
}

// skipped are elements whose content is never text for a reader.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Iframe: true, atom.Object: true, atom.Canvas: true, atom.Select: true, atom.Button: true,
}

var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true,
	atom.Main: true, atom.Nav: true, atom.Aside: true, atom.Table: true, atom.Tr: true, atom.Blockquote: true,
	atom.Ul: true, atom.Ol: true, atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Figure: true, atom.Form: true,
}

func (w *mdWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
	case html.DocumentNode:
		w.children(n)
		return
	default:
		return
	}
	if skipped[n.DataAtom] {
		return
	}
	switch n.DataAtom {
	case atom.Head:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.DataAtom == atom.Title && !w.title {
				w.title = true
				w.b.WriteString("# ")
				w.children(c)
				w.b.WriteString("\n\n")
			}
		}
		return
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.b.WriteString("\n\n" + strings.Repeat("#", int(n.Data[1]-'0')) + " ")
		w.children(n)
		w.b.WriteString("\n\n")
		return
	case atom.Br:
		w.b.WriteString("\n")
		return
	case atom.Hr:
		w.b.WriteString("\n\n---\n\n")
		return
	case atom.Li:
		w.b.WriteString("\n" + strings.Repeat("  ", max(w.list-1, 0)) + "- ")
		w.children(n)
		return
	case atom.Ul, atom.Ol:
		w.list++
		w.children(n)
		w.list--
		w.b.WriteString("\n")
		return
	case atom.Pre:
		w.b.WriteString("\n\n```\n")
		w.pre++
		w.children(n)
		w.pre--
		w.b.WriteString("\n```\n\n")
		return
	case atom.Code:
		if w.pre > 0 {
			w.children(n)
			return
		}
		w.b.WriteString("`")
		w.children(n)
		w.b.WriteString("`")
		return
	case atom.A:
		href := attr(n, "href")
		if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
			w.children(n)
			return
		}
		w.b.WriteString("[")
		w.children(n)
		w.b.WriteString("](" + href + ")")
		return
	case atom.Img:
		if alt := attr(n, "alt"); alt != "" {
			w.b.WriteString("[image: " + alt + "]")
		}
		return
	case atom.Td, atom.Th:
		w.children(n)
		w.b.WriteString(" | ")
		return
	}
	if blocks[n.DataAtom] {
		w.b.WriteString("\n\n")
		w.children(n)
		w.b.WriteString("\n\n")
		return
	}
	w.children(n)
}

func (w *mdWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

// text writes a text node: as it is inside <pre>, else with runs of
// white space folded to one space.
func (w *mdWriter) text(s string) {
	if w.pre > 0 {
		w.b.WriteString(s)
		return
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		if s != "" {
			w.space()
		}
		return
	}
	if s[0] == ' ' || s[0] == '\n' || s[0] == '\t' {
		w.space()
	}
	w.b.WriteString(strings.Join(f, " "))
	if last := s[len(s)-1]; last == ' ' || last == '\n' || last == '\t' {
		w.b.WriteString(" ")
	}
}

func (w *mdWriter) space() {
	out := w.b.String()
	if out != "" && !strings.HasSuffix(out, " ") && !strings.HasSuffix(out, "\n") {
		w.b.WriteString(" ")
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return strings.TrimSpace(a.Val)
		}
	}
	return ""
}

// collapseBlankLines trims trailing spaces from lines and keeps at most
// one blank line in a row.
func collapseBlankLines(s string) string {
	var b strings.Builder
	blank := 0
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	return b.String()
}
