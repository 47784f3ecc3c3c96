package agenttest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"reasonix/agent"
)

// The fake servers read the images a request shows back into
// agent.Message.Images, so a test asserts what the model would have seen
// whatever the wire.

// dataURLImage decodes an inline data:<type>;base64,<data> URL.
func dataURLImage(url string) (agent.Image, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return agent.Image{}, fmt.Errorf("agenttest: image URL %.40q is not a data: URL", url)
	}
	mediaType, data, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return agent.Image{}, fmt.Errorf("agenttest: image data URL is not base64")
	}
	return base64Image(mediaType, data)
}

func base64Image(mediaType, data string) (agent.Image, error) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return agent.Image{}, fmt.Errorf("agenttest: image data: %w", err)
	}
	if mediaType == "" || len(raw) == 0 {
		return agent.Image{}, fmt.Errorf("agenttest: an image without a media type or data")
	}
	return agent.Image{MediaType: mediaType, Data: raw}, nil
}

// ImagePixels are the bytes of the picture ImageRequest shows: a real 1×1
// PNG, so a server that checks images would accept it.
var ImagePixels = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
	0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
	0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}

// ImageRequest is a conversation whose last batch answers two calls, the
// first of which shows an image, then a steering note: the case each wire
// has to place the image in (inside the tool result, or in a user message
// after the whole batch).
func ImageRequest() agent.Request {
	return agent.Request{
		Model: "vision-model",
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "be brief"},
			{Role: agent.RoleUser, Content: "what does the logo look like?"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "call_1", Name: "view_image", Arguments: `{"path":"logo.png"}`},
				{ID: "call_2", Name: "ls", Arguments: `{"path":"."}`},
			}},
			{Role: agent.RoleTool, ToolCallID: "call_1", Name: "view_image", Content: "logo.png: image/png, 1x1",
				Images: []agent.Image{{MediaType: "image/png", Data: ImagePixels}}},
			{Role: agent.RoleTool, ToolCallID: "call_2", Name: "ls", Content: "logo.png"},
			{Role: agent.RoleUser, Content: "steer: be quick"},
		},
	}
}

// Golden compares got, a JSON document, with the file at path after
// indenting both the same way. With REASONIX_UPDATE_GOLDEN=1 in the
// environment it writes the file instead.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatalf("golden %s: the body is not JSON: %v", path, err)
	}
	buf.WriteByte('\n')
	if os.Getenv("REASONIX_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (REASONIX_UPDATE_GOLDEN=1 writes it)", path, err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("the body differs from %s:\n%s", path, buf.String())
	}
}

// CheckImageRequest checks the one request srv received for ImageRequest:
// its body equals the golden file, and the server read back exactly the
// one image, byte for byte.
func CheckImageRequest(t testing.TB, srv *Server, golden string) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the server saw %d requests, want 1", len(reqs))
	}
	Golden(t, golden, reqs[0].Body)
	var shown []agent.Image
	for _, m := range reqs[0].Messages {
		shown = append(shown, m.Images...)
	}
	if len(shown) != 1 || shown[0].MediaType != "image/png" || !bytes.Equal(shown[0].Data, ImagePixels) {
		t.Errorf("the server read %d images back, want the one PNG: %+v", len(shown), reqs[0].Messages)
	}
}
