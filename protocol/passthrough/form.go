package passthrough

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"strings"
)

// A multipart body is held as the client sent it (uploads can be tens of
// megabytes); the model is read and renamed by locating its part's value in
// those bytes, in one forward scan that never copies or parses the other
// parts (the files).

// Boundary returns the boundary of a multipart/form-data Content-Type.
func Boundary(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" {
		return "", errors.New("the body must be multipart/form-data")
	}
	if params["boundary"] == "" {
		return "", errors.New("the multipart Content-Type has no boundary")
	}
	return params["boundary"], nil
}

// FormField returns the value of the form field name ("" and false when
// the body has no such field, an error when it is not well formed or has
// the field twice: ccload reads the first, an upstream may read the last,
// so a second "model" would reach a model the token may not use).
func FormField(body []byte, boundary, name string) (string, bool, error) {
	start, end, err := locate(body, boundary, name)
	if err != nil || start < 0 {
		return "", false, err
	}
	if again, _, err := locateFrom(body, boundary, name, end); err != nil {
		return "", false, err
	} else if again >= 0 {
		return "", false, fmt.Errorf("the form has the field %q twice", name)
	}
	return string(body[start:end]), true, nil
}

// RenameFormField returns body with the value of field name replaced by
// value (the body itself when the field is absent). The parts before and
// after are copied as they are.
func RenameFormField(body []byte, boundary, name, value string) ([]byte, error) {
	start, end, err := locate(body, boundary, name)
	if err != nil || start < 0 {
		return body, err
	}
	out := make([]byte, 0, len(body)-(end-start)+len(value))
	out = append(out, body[:start]...)
	out = append(out, value...)
	return append(out, body[end:]...), nil
}

var errForm = errors.New("the multipart body is not well formed")

// locate finds the value of the first part named name (RFC 7578): its
// byte range, or -1 when no part has that name.
func locate(body []byte, boundary, name string) (start, end int, err error) {
	delim := []byte("--" + boundary)
	i := bytes.Index(body, delim)
	if i < 0 {
		return -1, -1, errForm
	}
	return locateFrom(body, boundary, name, i)
}

// locateFrom is locate from the delimiter that starts at body[at:], which
// may be the end of a value (its "\r\n" then the delimiter).
func locateFrom(body []byte, boundary, name string, at int) (start, end int, err error) {
	delim := []byte("--" + boundary)
	next := append([]byte("\r\n"), delim...)
	i := at
	if bytes.HasPrefix(body[i:], next) {
		i += 2
	}
	if !bytes.HasPrefix(body[i:], delim) {
		return -1, -1, errForm
	}
	pos := i + len(delim)
	for {
		rest := body[pos:]
		if bytes.HasPrefix(rest, []byte("--")) {
			return -1, -1, nil // the closing delimiter
		}
		// Transport padding (RFC 2046 §5.1.1) then the line break.
		rest = bytes.TrimLeft(rest, " \t")
		if !bytes.HasPrefix(rest, []byte("\r\n")) {
			return -1, -1, errForm
		}
		hstart := len(body) - len(rest) + 2
		h := bytes.Index(body[hstart:], []byte("\r\n\r\n"))
		if h < 0 {
			// A part with no header lines starts its value at once.
			if !bytes.HasPrefix(body[hstart:], []byte("\r\n")) {
				return -1, -1, errForm
			}
			h = -2
		}
		vstart := hstart + h + 4
		n := bytes.Index(body[vstart:], next)
		if n < 0 {
			return -1, -1, errForm
		}
		vend := vstart + n
		if h >= 0 && partName(body[hstart:hstart+h]) == name {
			return vstart, vend, nil
		}
		pos = vend + len(next)
	}
}

// partName reads the name parameter of a part's Content-Disposition.
func partName(headers []byte) string {
	for line := range strings.SplitSeq(string(headers), "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "Content-Disposition") {
			continue
		}
		if _, params, err := mime.ParseMediaType(strings.TrimSpace(v)); err == nil {
			return params["name"]
		}
	}
	return ""
}
