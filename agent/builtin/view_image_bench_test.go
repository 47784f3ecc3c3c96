package builtin

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"reasonix/agent"
)

// noisePNG is a PNG of random pixels about size bytes large: noise does
// not compress, so the file is as big as its pixels.
func noisePNG(tb testing.TB, size int) []byte {
	tb.Helper()
	side := 1
	for side*side*4 < size {
		side++
	}
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkViewImage1MiB is one view_image call on a 1 MiB PNG as a run
// makes it: resolve and read the file, check its type and size, attach
// it, and encode it in base64 as every wire sends it.
func BenchmarkViewImage1MiB(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	data := noisePNG(b, 1<<20)
	if err := os.WriteFile(filepath.Join(dir, "big.png"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	env := agent.ToolEnv{Workdir: dir, Paths: &rootGuard{root: dir, hidden: map[string]bool{}}, Vision: true}
	r := agent.NewToolRegistry()
	if err := r.AddBuiltins(env, []string{"view_image"}); err != nil {
		b.Fatal(err)
	}
	tl, _ := r.Get("view_image")
	args := json.RawMessage(`{"path":"big.png"}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ctx, taken := agent.ContextWithImages(b.Context())
		if _, err := tl.Execute(ctx, args); err != nil {
			b.Fatal(err)
		}
		imgs := taken()
		if len(imgs) != 1 || len(imgs[0].DataURL()) < len(data) {
			b.Fatal("no image attached")
		}
	}
}
