package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestRunShowsTheModelAnImage: on the built binary and each provider wire,
// the model calls view_image, the next request carries the picture (read
// back by the fake server from where that wire puts it), the request after
// that carries only the result's text, and no file the run wrote holds the
// picture's bytes.
func TestRunShowsTheModelAnImage(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic", "responses"} {
		t.Run(kind, func(t *testing.T) {
			e := &e2e{t: t, home: t.TempDir(), work: t.TempDir(), srv: agenttest.NewServerFor(t, kind,
				toolTurn(call("v1", "view_image", `{"path":"shots/logo.png"}`)),
				toolTurn(call("l1", "ls", `{}`)),
				answer("a green dot"),
			)}
			vision := ""
			if kind == "openai" {
				vision = "vision = true" // an OpenAI-compatible server says it takes images
			}
			e.writeUserConfig(fmt.Sprintf(`
default_model = "fake"

[[providers]]
name = "fake"
kind = %q
base_url = %q
model = "fake-model"
api_key_env = "FAKE_API_KEY"
max_retries = 0
%s
`, kind, e.srv.URL, vision))
			pixels := encodePNG(t, 64, 48)
			if err := os.MkdirAll(filepath.Join(e.work, "shots"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.work, "shots", "logo.png"), pixels, 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := e.run("run", "what does the logo look like?")
			if code != exitOK {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			reqs := e.srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			if !slices.ContainsFunc(reqs[0].Tools, func(s agent.ToolSchema) bool { return s.Name == "view_image" }) {
				t.Fatal("the first request does not offer view_image")
			}
			shown := func(r agenttest.Request) (imgs []agent.Image) {
				for _, m := range r.Messages {
					imgs = append(imgs, m.Images...)
				}
				return imgs
			}
			if imgs := shown(reqs[1]); len(imgs) != 1 || imgs[0].MediaType != "image/png" || !bytes.Equal(imgs[0].Data, pixels) {
				t.Fatalf("the request after view_image shows %d images, want logo.png", len(imgs))
			}
			if imgs := shown(reqs[2]); len(imgs) != 0 {
				t.Errorf("the request after that still shows %d images", len(imgs))
			}
			text := ""
			for _, m := range reqs[2].Messages {
				if m.Role == agent.RoleTool && m.ToolCallID == "v1" {
					text = m.Content
				}
			}
			if !strings.HasPrefix(text, "shots/logo.png: image/png, 64x48 pixels") || !strings.Contains(text, "next turn only") {
				t.Errorf("view_image's result, as the last request has it: %q", text)
			}
			encoded := base64.StdEncoding.EncodeToString(pixels)
			filepath.WalkDir(e.home, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(encoded)) || bytes.Contains(b, pixels) {
					t.Errorf("%s holds the picture", p)
				}
				return nil
			})
		})
	}
}

// TestRunOffersNoImagesToATextModel: an OpenAI-compatible provider that
// does not say it takes images gets no view_image.
func TestRunOffersNoImagesToATextModel(t *testing.T) {
	e := newE2E(t, answer("nothing to see"))
	if _, stderr, code := e.run("run", "hello"); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Tools) == 0 {
		t.Fatalf("%d requests", len(reqs))
	}
	if slices.ContainsFunc(reqs[0].Tools, func(s agent.ToolSchema) bool { return s.Name == "view_image" }) {
		t.Error("a text-only model is offered view_image")
	}
}

// encodePNG is a w×h PNG of a gradient, so its bytes are its own.
func encodePNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{R: uint8(x * 4), G: uint8(y * 5), B: 0x80, A: 0xff})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
