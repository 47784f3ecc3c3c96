package responses

import (
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestRequestShowsImages: the image a tool result shows is on the wire
// where this API takes it (see the golden file), and the fake server reads
// back the same bytes.
func TestRequestShowsImages(t *testing.T) {
	srv := agenttest.NewServerFor(t, "responses", agenttest.Turn{Text: "a green dot"})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	if got := agenttest.Collect(t, p, agenttest.ImageRequest()); got.Final.Err != nil {
		t.Fatal(got.Final.Err)
	}
	agenttest.CheckImageRequest(t, srv, "testdata/image_request.json")
}

// BenchmarkEncodeImageRequest is the wire's part of showing a 1 MiB
// picture: encoding ImageRequest with a 1 MiB image in place of the dot.
func BenchmarkEncodeImageRequest(b *testing.B) {
	p, _ := newTestProvider(b, agent.ProviderConfig{Model: "m"})
	req := agenttest.ImageRequest()
	req.Messages[3].Images = []agent.Image{{MediaType: "image/png", Data: make([]byte, 1<<20)}}
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.encodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}
