package dashboard

import "testing"

// TestStreamCount: a principal holds at most MaxStreamsPerPrincipal live
// streams; a release frees a slot once, however often it is called.
func TestStreamCount(t *testing.T) {
	var c streamCount
	var releases []func()
	for range MaxStreamsPerPrincipal {
		rel, ok := c.acquire("token:a")
		if !ok {
			t.Fatal("refused below the cap")
		}
		releases = append(releases, rel)
	}
	if _, ok := c.acquire("token:a"); ok {
		t.Fatal("a stream above the cap was allowed")
	}
	if _, ok := c.acquire("token:b"); !ok {
		t.Fatal("another principal is refused")
	}
	releases[0]()
	releases[0]()
	if _, ok := c.acquire("token:a"); !ok {
		t.Fatal("a released slot is not free")
	}
	if _, ok := c.acquire("token:a"); ok {
		t.Fatal("a double release freed two slots")
	}
}
