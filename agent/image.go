package agent

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Image is a picture a tool result carries to the model (view_image). The
// tool has checked Data's type by its content; MediaType is one of the
// ImageTypes.
type Image struct {
	MediaType string
	Data      []byte
}

// ImageTypes are the media types every wire with images accepts (Anthropic
// Messages, OpenAI Chat Completions and Responses alike).
var ImageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// imageTokens is what the token estimate counts for one attached image:
// Anthropic downscales a picture to about 1.15 megapixels (≈1,600 tokens)
// and OpenAI's high detail costs about as much, so this errs high for
// small pictures and is near the truth for large ones.
const imageTokens = 1600

// ErrNoImages is returned by AttachImage when ctx is not a call the harness
// runs, so there is no result the image could travel with.
var ErrNoImages = errors.New("agent: this call's result cannot carry images")

// attachments collects the images one tool call attaches to its result.
type attachments struct {
	mu     sync.Mutex
	images []Image
}

type attachmentsKey struct{}

// AttachImage attaches img to the result of the tool call running in ctx:
// the model sees it with the call's text on its next request only. Wrapping
// tools (journal, redaction) pass ctx on, so the image reaches the harness
// whatever wraps the tool. The image is never written to a transcript or
// an event (see Message.Images).
func AttachImage(ctx context.Context, img Image) error {
	att, ok := ctx.Value(attachmentsKey{}).(*attachments)
	if !ok {
		return ErrNoImages
	}
	if len(img.Data) == 0 || img.MediaType == "" {
		return fmt.Errorf("agent: an image needs data and a media type")
	}
	att.mu.Lock()
	defer att.mu.Unlock()
	att.images = append(att.images, img)
	return nil
}

// ContextWithImages returns ctx ready for AttachImage, and a function that
// returns (and forgets) what was attached since. The harness does this for
// every call it runs; a caller that runs a tool outside a run (a test, a
// server exposing tools) may do it too.
func ContextWithImages(ctx context.Context) (context.Context, func() []Image) {
	ctx, att := withAttachments(ctx)
	return ctx, att.take
}

func withAttachments(ctx context.Context) (context.Context, *attachments) {
	att := &attachments{}
	return context.WithValue(ctx, attachmentsKey{}, att), att
}

func (att *attachments) take() []Image {
	att.mu.Lock()
	defer att.mu.Unlock()
	imgs := att.images
	att.images = nil
	return imgs
}

// dropImages forgets every image the conversation holds once a request
// carried them. An image travels on exactly one request, the one right
// after its tool result: kept longer it would cost its tokens (and its
// bytes, up to megabytes) on every later request, and removing it later
// would change a prompt prefix the provider has cached. The tool's text
// stays and says so, which keeps every later request's prefix stable.
func (a *Agent) dropImages() {
	if !a.holdsImages {
		return
	}
	a.holdsImages = false
	for i := range a.messages {
		a.messages[i].Images = nil
	}
	for i := range a.window.prefix {
		a.window.prefix[i].Images = nil
	}
}

// DataURL is img as a data: URL, the form OpenAI's wires take an inline
// image in.
func (img Image) DataURL() string {
	// One allocation of the final size: a picture is megabytes.
	var b strings.Builder
	prefix := "data:" + img.MediaType + ";base64,"
	b.Grow(len(prefix) + base64.StdEncoding.EncodedLen(len(img.Data)))
	b.WriteString(prefix)
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	enc.Write(img.Data) // a strings.Builder never fails a write
	enc.Close()
	return b.String()
}

// Base64 is img's bytes in standard base64, the form every wire sends.
func (img Image) Base64() string { return base64.StdEncoding.EncodeToString(img.Data) }
