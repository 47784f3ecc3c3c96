// Package bm25 ranks short documents against a query with Okapi BM25 over
// an in-memory inverted index. It serves the memory recall before each
// turn and the history search: both rank at most tens of thousands of
// documents, and a query touches only the postings of its own terms.
//
// An Index is built once (Add, then Search any number of times) and is
// safe for concurrent Searches once no Add runs.
package bm25

import (
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// The usual Okapi constants.
const (
	k1 = 1.2
	b  = 0.75
)

type posting struct {
	doc int32
	tf  int32
}

// Index is an inverted index of documents numbered in the order added.
type Index struct {
	postings map[string][]posting
	lengths  []int32
	total    int64
}

// New returns an empty index.
func New() *Index { return &Index{postings: map[string][]posting{}} }

// Len is the number of documents added.
func (x *Index) Len() int { return len(x.lengths) }

// Add indexes text as the next document and returns its number.
func (x *Index) Add(text string) int {
	doc := int32(len(x.lengths))
	terms := Terms(text)
	tf := make(map[string]int32, len(terms))
	for _, t := range terms {
		tf[t]++
	}
	for t, n := range tf {
		x.postings[t] = append(x.postings[t], posting{doc: doc, tf: n})
	}
	x.lengths = append(x.lengths, int32(len(terms)))
	x.total += int64(len(terms))
	return int(doc)
}

// Hit is one ranked document.
type Hit struct {
	Doc   int
	Score float64
}

// Opts bound a search.
type Opts struct {
	// Limit is the most hits returned; 0 is 10.
	Limit int
	// Floor drops hits scoring below Floor × the best hit's score, which
	// trims a tail matched only by common words; 0 keeps every hit.
	Floor float64
	// Keep, when set, says whether a document may be returned (the
	// caller's visibility rule); nil keeps every one.
	Keep func(doc int) bool
}

// Search ranks the documents holding at least one of query's terms, best
// first (ties by the later document, so newer wins), bounded by o.
func (x *Index) Search(query string, o Opts) []Hit {
	limit := o.Limit
	if limit <= 0 {
		limit = 10
	}
	n := len(x.lengths)
	if n == 0 {
		return nil
	}
	avg := float64(x.total) / float64(n)
	if avg == 0 {
		avg = 1
	}
	// Dense scores and a bounded insertion list keep a search over tens
	// of thousands of documents well under a millisecond: no map, no sort
	// of every match.
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	if cap(sc.scores) < n {
		sc.scores = make([]float64, n)
	}
	scores := sc.scores[:n]
	touched := sc.touched[:0]
	defer func() {
		for _, d := range touched {
			scores[d] = 0
		}
		sc.touched = touched[:0]
	}()
	seen := map[string]bool{}
	for _, t := range Terms(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := x.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := tf * (k1 + 1) / (tf + k1*(1-b+b*float64(x.lengths[p.doc])/avg))
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += idf * norm
		}
	}
	better := func(a, c Hit) bool { return a.Score > c.Score || a.Score == c.Score && a.Doc > c.Doc }
	hits := make([]Hit, 0, limit+1)
	for _, d := range touched {
		h := Hit{Doc: int(d), Score: scores[d]}
		if len(hits) == limit && !better(h, hits[limit-1]) {
			continue
		}
		if o.Keep != nil && !o.Keep(int(d)) {
			continue
		}
		i := sort.Search(len(hits), func(i int) bool { return better(h, hits[i]) })
		hits = append(hits, Hit{})
		copy(hits[i+1:], hits[i:])
		hits[i] = h
		if len(hits) > limit {
			hits = hits[:limit]
		}
	}
	if o.Floor > 0 && len(hits) > 0 {
		min := hits[0].Score * o.Floor
		for i, h := range hits {
			if h.Score < min {
				hits = hits[:i]
				break
			}
		}
	}
	return hits
}

// scratch is one search's working memory, reused: the scores are zero
// again when it goes back to the pool.
type scratch struct {
	scores  []float64
	touched []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Terms splits text into lowercase words of letters and digits, leaving out
// one-letter words and the commonest English words, which match everything
// and so rank nothing.
func Terms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 2 {
			continue
		}
		w = strings.ToLower(w)
		if stop[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by can do does for from has have how i if in is it its
		me my no not of on or our so that the their them then there these this to was we were what when where which
		who why will with you your please should would could about into out up`) {
		stop[w] = true
	}
}
