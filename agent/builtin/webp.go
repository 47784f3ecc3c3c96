package builtin

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// webpSize reads a WebP file's canvas size from its RIFF header: the
// standard library decodes no WebP, and the size is all view_image needs
// (the provider decodes the picture). data comes from the workspace, so it
// is untrusted: every length is checked before it is used.
//
// The layout (RFC 9649): "RIFF", size, "WEBP", then the first chunk —
// "VP8 " (lossy: a 3-byte frame tag, the start code 9d 01 2a, then 14-bit
// width and height), "VP8L" (lossless: signature 0x2f, then width-1 and
// height-1 in 14 bits each) or "VP8X" (extended: flags, 3 reserved bytes,
// then canvas width-1 and height-1 in 24 bits each).
func webpSize(data []byte) (w, h int, err error) {
	if len(data) < 20 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WEBP" {
		return 0, 0, errors.New("no RIFF WEBP header")
	}
	fourcc := string(data[12:16])
	size := binary.LittleEndian.Uint32(data[16:20])
	payload := data[20:]
	if uint64(size) < uint64(len(payload)) {
		payload = payload[:size]
	}
	switch fourcc {
	case "VP8 ":
		if len(payload) < 10 {
			return 0, 0, errors.New("VP8 chunk too short")
		}
		if payload[0]&1 != 0 {
			return 0, 0, errors.New("VP8 chunk does not start with a key frame")
		}
		if payload[3] != 0x9d || payload[4] != 0x01 || payload[5] != 0x2a {
			return 0, 0, errors.New("VP8 start code missing")
		}
		w = int(binary.LittleEndian.Uint16(payload[6:8]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(payload[8:10]) & 0x3fff)
	case "VP8L":
		if len(payload) < 5 || payload[0] != 0x2f {
			return 0, 0, errors.New("VP8L signature missing")
		}
		bits := binary.LittleEndian.Uint32(payload[1:5])
		w = int(bits&0x3fff) + 1
		h = int(bits>>14&0x3fff) + 1
	case "VP8X":
		if len(payload) < 10 {
			return 0, 0, errors.New("VP8X chunk too short")
		}
		w = int(uint24(payload[4:7])) + 1
		h = int(uint24(payload[7:10])) + 1
	default:
		return 0, 0, fmt.Errorf("unknown first chunk %q", fourcc)
	}
	if w == 0 || h == 0 {
		return 0, 0, fmt.Errorf("zero size %dx%d", w, h)
	}
	return w, h, nil
}

func uint24(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 }
