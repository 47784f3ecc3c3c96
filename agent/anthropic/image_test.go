package anthropic

import (
	"testing"

	"reasonix/agent/agenttest"
)

// TestRequestShowsImages: the image a tool result shows is on the wire
// where this API takes it (see the golden file), and the fake server reads
// back the same bytes.
func TestRequestShowsImages(t *testing.T) {
	srv := agenttest.NewServerFor(t, "anthropic", agenttest.Turn{Text: "a green dot"})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	if got := agenttest.Collect(t, p, agenttest.ImageRequest()); got.Final.Err != nil {
		t.Fatal(got.Final.Err)
	}
	agenttest.CheckImageRequest(t, srv, "testdata/image_request.json")
}
