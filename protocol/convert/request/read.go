package request

import (
	"strings"

	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/ccload/ccload/protocol/jsonwalk"
	"github.com/tidwall/gjson"
)

// validObject reports whether body is one valid JSON object.
func validObject(body []byte) bool {
	if !jsonwalk.Valid(jsonwalk.View(body)) {
		return false
	}
	return gjwalk.Parse(body).IsObject()
}

// number returns the JSON text of a number field, "" when absent or null.
func number(v gjson.Result, field string) (string, error) {
	switch v.Type {
	case gjson.Null:
		return "", nil
	case gjson.Number:
		return v.Raw, nil
	}
	return "", badRequest("%s: want a number", field)
}

// integer returns an integer field, 0 when absent or null.
func integer(v gjson.Result, field string) (int64, error) {
	switch v.Type {
	case gjson.Null:
		return 0, nil
	case gjson.Number:
		if f := v.Float(); f == float64(int64(f)) {
			return int64(f), nil
		}
	}
	return 0, badRequest("%s: want an integer", field)
}

// stringList reads a string or an array of strings (stop sequences).
func stringList(v gjson.Result, field string) ([]string, error) {
	switch {
	case v.Type == gjson.Null:
		return nil, nil
	case v.Type == gjson.String:
		return []string{v.Str}, nil
	case v.IsArray():
		var out []string
		var err error
		gjwalk.ForEach(v, func(_, s gjson.Result) bool {
			if s.Type != gjson.String {
				err = badRequest("%s: want strings", field)
				return false
			}
			out = append(out, s.Str)
			return true
		})
		return out, err
	}
	return nil, badRequest("%s: want a string or an array of strings", field)
}

// isZero reports whether a hint-like numeric or boolean field is absent or
// at its no-op value (0, false, null), so sending it nowhere changes nothing.
func isZero(v gjson.Result) bool {
	switch v.Type {
	case gjson.Null, gjson.False:
		return true
	case gjson.Number:
		return v.Num == 0
	}
	return false
}

// parseDataURL splits a base64 data URL ("data:image/png;base64,AAAA").
func parseDataURL(u string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mime, found = strings.CutSuffix(meta, ";base64")
	if !found {
		return "", "", false
	}
	return mime, data, true
}

func dataURL(mime, data string) string { return "data:" + mime + ";base64," + data }
