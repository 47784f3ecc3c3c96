package builtin

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// inHarness runs a tool as the harness does, with a context that takes
// the images it attaches (agent.ContextWithImages).
type inHarness struct{ agent.Tool }

func (h inHarness) ReadOnly() bool { return agent.IsReadOnly(h.Tool) }
func (h inHarness) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	ctx, _ = agent.ContextWithImages(ctx)
	return h.Tool.Execute(ctx, args)
}

// viewImage calls view_image on path and returns its text and what it
// attached.
func viewImageCall(t *testing.T, env agent.ToolEnv, path string) (string, []agent.Image, error) {
	t.Helper()
	ctx, taken := agent.ContextWithImages(t.Context())
	args, _ := json.Marshal(map[string]string{"path": path})
	out, err := tool(t, env, "view_image").Execute(ctx, args)
	return out, taken(), err
}

func encodeImage(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	for x := 0; x < w; x += 2 {
		img.SetColorIndex(x, 0, 1)
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// webpFile builds a WebP file whose first chunk is fourcc with payload.
func webpFile(fourcc string, payload []byte) []byte {
	out := []byte("RIFF")
	out = binary.LittleEndian.AppendUint32(out, uint32(12+len(payload)))
	out = append(out, "WEBP"+fourcc...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(payload)))
	return append(out, payload...)
}

func webpLossless(w, h int) []byte {
	return webpFile("VP8L", binary.LittleEndian.AppendUint32([]byte{0x2f}, uint32(w-1)|uint32(h-1)<<14))
}

func webpLossy(w, h int) []byte {
	p := []byte{0x50, 0x02, 0x00, 0x9d, 0x01, 0x2a} // key frame tag, start code
	p = binary.LittleEndian.AppendUint16(p, uint16(w))
	return append(binary.LittleEndian.AppendUint16(p, uint16(h)), 0, 0)
}

func webpExtended(w, h int) []byte {
	p := []byte{0x10, 0, 0, 0, byte(w - 1), byte((w - 1) >> 8), byte((w - 1) >> 16), byte(h - 1), byte((h - 1) >> 8), byte((h - 1) >> 16)}
	return webpFile("VP8X", p)
}

// pngHeader is a PNG that is only a signature and a valid IHDR claiming
// w×h pixels: what a decompression bomb looks like to DecodeConfig.
func pngHeader(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = binary.BigEndian.AppendUint32(out, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	out = append(out, chunk...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(chunk))
}

func TestViewImageShowsEachFormat(t *testing.T) {
	env, _ := testEnv(t)
	files := map[string]struct {
		data      []byte
		mediaType string
		size      string
	}{
		"a.png":      {encodeImage(t, "png", 7, 5), "image/png", "7x5"},
		"b.jpg":      {encodeImage(t, "jpeg", 9, 4), "image/jpeg", "9x4"},
		"c.gif":      {encodeImage(t, "gif", 3, 8), "image/gif", "3x8"},
		"d.webp":     {webpLossless(640, 480), "image/webp", "640x480"},
		"e.webp":     {webpFile("VP8 ", webpLossy(300, 200)), "image/webp", "300x200"},
		"f.webp":     {webpExtended(5000, 4000), "image/webp", "5000x4000"},
		"photo.jpeg": {agenttest.ImagePixels, "image/png", "1x1"}, // the content decides, not the name
	}
	for name, f := range files {
		if err := os.WriteFile(filepath.Join(env.Workdir, name), f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, f := range files {
		out, imgs, err := viewImageCall(t, env, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.HasPrefix(out, name+": "+f.mediaType+", "+f.size+" pixels") || !strings.Contains(out, "next turn only") {
			t.Errorf("%s: result %q", name, out)
		}
		if len(imgs) != 1 || imgs[0].MediaType != f.mediaType || !bytes.Equal(imgs[0].Data, f.data) {
			t.Errorf("%s: attached %d images (%+v), want the file as %s", name, len(imgs), imgs, f.mediaType)
		}
	}
}

func TestViewImageRefuses(t *testing.T) {
	env, g := testEnv(t)
	outside := t.TempDir()
	write := func(dir, name string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(env.Workdir, "notes.png", []byte("just text, named like a picture\n"))
	write(env.Workdir, "broken.png", append([]byte("\x89PNG\r\n\x1a\n"), "garbage after the signature"...))
	write(env.Workdir, "bomb.png", pngHeader(100_000, 100_000))
	write(env.Workdir, "wide.webp", webpExtended(1<<24, 1<<24))
	write(env.Workdir, "empty.png", nil)
	big := append(bytes.Clone(agenttest.ImagePixels), make([]byte, viewImageMaxBytes)...)
	write(env.Workdir, "big.png", big)
	write(env.Workdir, "secret/key.png", agenttest.ImagePixels)
	g.hidden["key.png"] = true
	write(outside, "out.png", agenttest.ImagePixels)
	if err := os.Symlink(filepath.Join(outside, "out.png"), filepath.Join(env.Workdir, "escape.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(env.Workdir, "dir.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"notes.png":                          "is not a PNG, JPEG, GIF or WebP image (its content looks like text/plain",
		"broken.png":                         "header is damaged",
		"bomb.png":                           "is 100000x100000 pixels; the limit is 40000000 pixels",
		"wide.webp":                          "the limit is 40000000 pixels",
		"empty.png":                          "is empty",
		"big.png":                            "the limit is 3145728 bytes",
		"secret/key.png":                     "hidden by policy",
		"escape.png":                         "outside the workspace",
		filepath.Join(outside, "out.png"):    "outside the workspace",
		"../" + filepath.Base(outside) + "/": "outside the workspace",
		"dir.png":                            "is a directory",
		"missing.png":                        "no such file",
	} {
		out, imgs, err := viewImageCall(t, env, path)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "view_image: ") {
			t.Errorf("%s: err %v, want one saying %q", path, err, want)
		}
		if out != "" || len(imgs) != 0 {
			t.Errorf("%s: a refused call returned %q and attached %d images", path, out, len(imgs))
		}
	}
}

func TestViewImageNeedsVisionAndARun(t *testing.T) {
	env, _ := testEnv(t)
	env.Vision = false
	r := agent.NewToolRegistry()
	if err := r.AddBuiltins(env, []string{"view_image"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Get("view_image"); ok {
		t.Error("view_image is in a run whose model takes no images")
	}
	env.Vision = true
	if err := os.WriteFile(filepath.Join(env.Workdir, "a.png"), agenttest.ImagePixels, 0o644); err != nil {
		t.Fatal(err)
	}
	// Outside a harness call there is no result to carry the picture.
	_, err := tool(t, env, "view_image").Execute(t.Context(), json.RawMessage(`{"path":"a.png"}`))
	if err == nil || !strings.Contains(err.Error(), "cannot carry images") {
		t.Errorf("err = %v", err)
	}
}

func TestWebpSize(t *testing.T) {
	for _, c := range []struct {
		data []byte
		w, h int
		bad  string
	}{
		{data: webpLossless(1, 1), w: 1, h: 1},
		{data: webpLossless(16384, 16384), w: 16384, h: 16384},
		{data: webpFile("VP8 ", webpLossy(0x3fff, 2)), w: 0x3fff, h: 2},
		{data: webpExtended(1<<24, 3), w: 1 << 24, h: 3},
		{data: webpFile("VP8 ", webpLossy(0, 5)), bad: "zero size"},
		{data: webpFile("VP8L", []byte{0x2e, 0, 0, 0, 0}), bad: "signature"},
		{data: webpFile("VP8 ", []byte{1, 0, 0, 0x9d, 1, 0x2a, 1, 0, 1, 0}), bad: "key frame"},
		{data: webpFile("VP8 ", []byte{0, 0, 0, 0x9d, 1, 0x2b, 1, 0, 1, 0}), bad: "start code"},
		{data: webpFile("VP8X", []byte{0, 0, 0}), bad: "too short"},
		{data: webpFile("ALPH", []byte{0, 0, 0}), bad: "unknown first chunk"},
		{data: []byte("RIFF\x00\x00\x00\x00WAVEfmt "), bad: "no RIFF WEBP header"},
		// The chunk's declared size cuts the payload short: nothing past it is read.
		{data: append(webpFile("VP8L", nil), 0x2f, 1, 0, 0, 0), bad: "signature"},
	} {
		w, h, err := webpSize(c.data)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("% x: %dx%d, err %v; want %q", c.data, w, h, err, c.bad)
			}
			continue
		}
		if err != nil || w != c.w || h != c.h {
			t.Errorf("% x: %dx%d, err %v; want %dx%d", c.data, w, h, err, c.w, c.h)
		}
	}
}

// FuzzWebpSize: any bytes give a size or an error, never a panic, and a
// size is what the header's bit fields can hold.
func FuzzWebpSize(f *testing.F) {
	f.Add(webpLossless(640, 480))
	f.Add(webpFile("VP8 ", webpLossy(300, 200)))
	f.Add(webpExtended(1<<24, 1<<24))
	f.Add(webpFile("VP8X", nil))
	f.Add(webpFile("VP8 ", []byte{0, 0, 0, 0x9d, 1, 0x2a}))
	f.Add([]byte("RIFF\xff\xff\xff\xffWEBPVP8L\xff\xff\xff\xff\x2f"))
	f.Add([]byte("RIFF"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		w, h, err := webpSize(data)
		if err != nil {
			if w != 0 || h != 0 {
				t.Fatalf("an error with a size %dx%d", w, h)
			}
			return
		}
		if w < 1 || h < 1 || w > 1<<24 || h > 1<<24 {
			t.Fatalf("size %dx%d is outside what a header can say", w, h)
		}
	})
}

// FuzzCheckImage: whatever a workspace file holds, checkImage either
// refuses it or returns it unchanged as one of the four types, within the
// pixel bound, with a size that has pixels.
func FuzzCheckImage(f *testing.F) {
	f.Add(agenttest.ImagePixels)
	f.Add(encodeImage(f, "gif", 3, 2))
	f.Add(encodeImage(f, "jpeg", 4, 4))
	f.Add(pngHeader(100_000, 100_000))
	f.Add(pngHeader(0, 5))
	f.Add(webpLossless(7, 9))
	f.Add(webpExtended(1<<24, 1<<24))
	f.Add([]byte("GIF89a\xff\xff\xff\xff"))
	f.Add([]byte("\xff\xd8\xff\xe0garbage"))
	f.Add([]byte("plain text"))
	f.Fuzz(func(t *testing.T, data []byte) {
		img, w, h, err := checkImage(data)
		if err != nil {
			return
		}
		if !slices.Contains(agent.ImageTypes, img.MediaType) || !bytes.Equal(img.Data, data) {
			t.Fatalf("accepted as %q (%d bytes of %d)", img.MediaType, len(img.Data), len(data))
		}
		if w < 1 || h < 1 || int64(w)*int64(h) > viewImageMaxPixels {
			t.Fatalf("accepted a %dx%d picture", w, h)
		}
	})
}
