package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig reads the formats view_image shows
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"os"

	"reasonix/agent"
)

const (
	// viewImageMaxBytes bounds the file view_image reads (the tool
	// contract's 3 MiB): base64 makes it 4 MiB on the wire, under every
	// provider's per-image limit (Anthropic's is 5 MB).
	viewImageMaxBytes = 3 << 20
	// viewImageMaxPixels bounds width × height (the contract's 40
	// megapixels): providers downscale anything large, and a small file
	// claiming huge dimensions is a decompression bomb for whoever decodes it.
	viewImageMaxPixels = 40_000_000
)

func init() {
	agent.RegisterBuiltin("view_image", func(env agent.ToolEnv) agent.Tool {
		if !env.Vision {
			return nil // the model takes no images: showing it one would fail the request
		}
		return &viewImage{env: env}
	})
}

// viewImage shows the model a PNG, JPEG, GIF or WebP file of the workspace.
// It reads through the same guard as read_file (workspace, symlinks,
// forbid_read; Read deny rules apply to it as to read_file), and knows a
// file's type by its content, never by its name.
type viewImage struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*viewImage)(nil)

func (*viewImage) Name() string   { return "view_image" }
func (*viewImage) ReadOnly() bool { return true }
func (*viewImage) Description() string {
	return "Look at an image file of the workspace (PNG, JPEG, GIF or WebP; at most 3 MiB and 40 megapixels). " +
		"The picture is shown to you on your next turn only; later turns keep just the result's text line, " +
		"so note what you need from it, or call view_image again."
}

func (*viewImage) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Image file to look at, relative to the workspace or absolute."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

type viewImageArgs struct {
	Path string `json:"path"`
}

func (t *viewImage) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a viewImageArgs
	if err := decodeArgs("view_image", raw, &a, "path"); err != nil {
		return "", err
	}
	p, err := readPath("view_image", t.env, a.Path)
	if err != nil {
		return "", err
	}
	data, err := readImageFile(p, a.Path)
	if err != nil {
		return "", err
	}
	img, w, h, err := checkImage(data)
	if err != nil {
		return "", fmt.Errorf("view_image: %s %w", a.Path, err)
	}
	if err := agent.AttachImage(ctx, img); err != nil {
		return "", fmt.Errorf("view_image: %w", err)
	}
	return fmt.Sprintf("%s: %s, %dx%d pixels, %d bytes. The image is shown to you on your next turn only; "+
		"later turns keep just this line (call view_image again to look again).",
		displayPath(t.env, p), img.MediaType, w, h, len(data)), nil
}

// readImageFile reads a regular file of at most viewImageMaxBytes; the
// bound holds even when the file grows while it is read.
func readImageFile(path, name string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("view_image: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("view_image: %w", err)
	}
	if info.IsDir() {
		return nil, fmt.Errorf("view_image: %s is a directory; use ls to list it", name)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("view_image: %s is not a regular file", name)
	}
	tooBig := func(size int64) error {
		return fmt.Errorf("view_image: %s is %d bytes; the limit is %d bytes (3 MiB): view a smaller copy", name, size, viewImageMaxBytes)
	}
	if info.Size() > viewImageMaxBytes {
		return nil, tooBig(info.Size())
	}
	// One buffer of the size stat gave, plus a byte to notice growth: no
	// copies while reading a picture of megabytes.
	data := make([]byte, info.Size()+1)
	n, err := io.ReadFull(f, data)
	switch {
	case err == nil:
		// The file grew past its size: read on only to the bound.
		more, err := io.ReadAll(io.LimitReader(f, viewImageMaxBytes+1-int64(n)))
		if err != nil {
			return nil, fmt.Errorf("view_image: %w", err)
		}
		data = append(data, more...)
		if len(data) > viewImageMaxBytes {
			return nil, tooBig(int64(len(data)))
		}
		return data, nil
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return data[:n], nil
	default:
		return nil, fmt.Errorf("view_image: %w", err)
	}
}

// checkImage decides data's type by its content (the signature
// net/http sniffs) and reads its dimensions from its header; the error
// completes a sentence that starts with the file's name.
func checkImage(data []byte) (img agent.Image, w, h int, err error) {
	if len(data) == 0 {
		return img, 0, 0, fmt.Errorf("is empty")
	}
	mediaType := http.DetectContentType(data)
	switch mediaType {
	case "image/png", "image/jpeg", "image/gif":
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || "image/"+format != mediaType {
			return img, 0, 0, fmt.Errorf("starts like %s but its header is damaged: %v", mediaType, err)
		}
		w, h = cfg.Width, cfg.Height
	case "image/webp":
		if w, h, err = webpSize(data); err != nil {
			return img, 0, 0, fmt.Errorf("starts like image/webp but its header is damaged: %v", err)
		}
	default:
		return img, 0, 0, fmt.Errorf("is not a PNG, JPEG, GIF or WebP image (its content looks like %s)", mediaType)
	}
	if w <= 0 || h <= 0 {
		return img, 0, 0, fmt.Errorf("has no pixels (%dx%d)", w, h)
	}
	if int64(w)*int64(h) > viewImageMaxPixels {
		return img, 0, 0, fmt.Errorf("is %dx%d pixels; the limit is %d pixels (40 megapixels): view a smaller copy", w, h, viewImageMaxPixels)
	}
	return agent.Image{MediaType: mediaType, Data: data}, w, h, nil
}
