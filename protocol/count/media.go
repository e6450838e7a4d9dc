package count

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strconv"
	"strings"
)

// imageSize reads the pixel size from the header of a base64 image (PNG,
// JPEG, GIF, WebP); ok is false when the data is not one of them. Only the
// header is decoded: the base64 text is read as a stream.
func imageSize(b64 string) (w, h int, ok bool) {
	if len(b64) < 16 {
		return 0, 0, false
	}
	head, err := base64.StdEncoding.DecodeString(b64[:16]) // 12 bytes: enough to sniff
	if err != nil {
		return 0, 0, false
	}
	r := base64.NewDecoder(base64.StdEncoding, strings.NewReader(b64))
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG")):
		c, err := png.DecodeConfig(r)
		return c.Width, c.Height, err == nil
	case bytes.HasPrefix(head, []byte("\xff\xd8")):
		c, err := jpeg.DecodeConfig(r)
		return c.Width, c.Height, err == nil
	case bytes.HasPrefix(head, []byte("GIF8")):
		c, err := gif.DecodeConfig(r)
		return c.Width, c.Height, err == nil
	case bytes.HasPrefix(head, []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return webpSize(r)
	}
	return 0, 0, false
}

// webpSize reads the canvas size of a WebP file (RIFF, then a VP8, VP8L or
// VP8X chunk; see the WebP container specification).
func webpSize(r io.Reader) (w, h int, ok bool) {
	var b [30]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, 0, false
	}
	switch string(b[12:16]) {
	case "VP8 ": // lossy: frame tag (3), start code (3), then 14-bit sizes
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, false
		}
		w = int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff)
	case "VP8L": // lossless: signature 0x2f, then 14-bit width-1 and height-1
		if b[20] != 0x2f {
			return 0, 0, false
		}
		v := binary.LittleEndian.Uint32(b[21:25])
		w = int(v&0x3fff) + 1
		h = int(v>>14&0x3fff) + 1
	case "VP8X": // extended: 24-bit canvas width-1 and height-1
		w = (int(b[24]) | int(b[25])<<8 | int(b[26])<<16) + 1
		h = (int(b[27]) | int(b[28])<<8 | int(b[29])<<16) + 1
	default:
		return 0, 0, false
	}
	return w, h, w > 0 && h > 0
}

// pdfPages estimates the page count of a base64 PDF: page objects
// ("/Type /Page", not "/Pages"), else the largest "/Count" of a page tree,
// else 1. Pages kept in compressed object streams are not visible, so this
// can undercount; a PDF that does not decode counts as one page.
func pdfPages(b64 string) int {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return 1
	}
	pages := 0
	for rest := data; ; {
		i := bytes.Index(rest, []byte("/Type"))
		if i < 0 {
			break
		}
		rest = bytes.TrimLeft(rest[i+5:], " \t\r\n")
		if bytes.HasPrefix(rest, []byte("/Page")) && (len(rest) == 5 || rest[5] != 's') {
			pages++
		}
	}
	if pages > 0 {
		return pages
	}
	for rest := data; ; {
		i := bytes.Index(rest, []byte("/Count "))
		if i < 0 {
			break
		}
		rest = rest[i+7:]
		j := 0
		for j < len(rest) && j < 7 && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(string(rest[:j])); err == nil && n > pages {
			pages = n
		}
	}
	return max(pages, 1)
}

// b64Len is the decoded size of base64 text, without decoding it.
func b64Len(b64 string) int { return len(b64) * 3 / 4 }
