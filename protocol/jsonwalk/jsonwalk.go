// Package jsonwalk reads the members of a JSON object in place, without
// parsing what it does not need: gjson parses every number it meets as a
// float, and strconv.ParseFloat alone takes about 1 KiB of stack. The
// walks on a request's path (usage counts, the check for an error hidden
// in a 2xx body, the stream peek) were its deepest point, past the 8 KiB
// a request's goroutine should keep to (engine.TestRequestsFitEightKiBStack).
// The stream converters read their hot string fields with it too.
package jsonwalk

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// IntOf is the integer member key of the JSON object obj, read as
// gjson's Int reads it: a number, or a string that holds one (a few
// OpenAI-compatible servers quote their counts); 0 when obj is not an
// object or the member is missing or neither.
func IntOf(obj, key string) int64 {
	raw := Member(obj, key)
	if n, ok := Int(raw); ok {
		return n
	}
	if len(raw) > 2 && raw[0] == '"' {
		n, _ := Int(raw[1 : len(raw)-1])
		return n
	}
	return 0
}

// Int is the integer a raw JSON number holds; ok is false for anything
// else (null, a string, an object, nothing).
func Int(raw string) (n int64, ok bool) {
	if raw == "" || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return n, true
	}
	return gjson.Parse(raw).Int(), true // 1.5e3 and the like, which no API sends for a count, as gjson reads it
}

// Member is the raw value of obj's member key, "" when obj is not an
// object or has no such member.
func Member(obj, key string) string {
	var found string
	Members(obj, func(k, v string) bool {
		if k == key {
			found = v
			return false
		}
		return true
	})
	return found
}

// Members calls fn with each member of the JSON object obj, its key as
// written (escapes kept) and its raw value, until fn returns false. It
// stops quietly at anything malformed.
func Members(obj string, fn func(key, val string) bool) { items(obj, '{', fn) }

// Elements calls fn with each raw element of the JSON array arr, in
// order, until fn returns false. It stops quietly at anything malformed.
// Skipping an element costs what valueEnd costs, a jump from quote to
// quote inside strings, where gjson's Array and ForEach step through
// every byte of every element.
func Elements(arr string, fn func(val string) bool) {
	items(arr, '[', func(_, val string) bool { return fn(val) })
}

// items is the walk of Members (open '{') and Elements (open '['): the
// values of s one after another, each after its key in an object.
func items(s string, open byte, fn func(key, val string) bool) {
	i := skipSpace(s, 0)
	if i == len(s) || s[i] != open {
		return
	}
	i++
	for {
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
		}
		if i == len(s) || s[i] == open+2 { // '}' and ']' are two past '{' and '['
			return
		}
		var key string
		if open == '{' {
			if s[i] != '"' {
				return // not JSON
			}
			end := stringEnd(s, i)
			if end < 0 {
				return
			}
			key = s[i+1 : end-1]
			i = skipSpace(s, end)
			if i == len(s) || s[i] != ':' {
				return
			}
			i = skipSpace(s, i+1)
		}
		end := valueEnd(s, i)
		if end <= i {
			return
		}
		if !fn(key, s[i:end]) {
			return
		}
		i = end
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index just past the JSON string that starts at s[i],
// or -1 when it does not end. It jumps from quote to quote with
// strings.IndexByte, which scans many bytes per instruction, and counts
// the backslashes before each quote: an odd run escapes it. Most of an
// agent's request is text inside strings (prompts, tool schemas, file
// contents), so this is most of a walk: byte by byte, the top level of an
// 85 KB Claude Code request took about 110 µs.
func stringEnd(s string, i int) int {
	for j := i + 1; ; {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		p := q - 1
		for p > i && s[p] == '\\' {
			p--
		}
		if (q-1-p)%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// structural marks the bytes that matter while skipping an object or an
// array: a table lookup passes the rest (digits, spaces, separators) with
// one load and one branch.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// valueEnd is the index just past the JSON value that starts at s[i], or
// -1 when it does not end.
func valueEnd(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			if !structural[s[j]] {
				continue
			}
			switch s[j] {
			case '"':
				end := stringEnd(s, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(s) {
		switch s[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// First is the raw first element of the JSON array arr, "" when arr is not
// an array or is empty.
func First(arr string) string {
	i := skipSpace(arr, 0)
	if i == len(arr) || arr[i] != '[' {
		return ""
	}
	i = skipSpace(arr, i+1)
	if i == len(arr) || arr[i] == ']' {
		return ""
	}
	if end := valueEnd(arr, i); end > i {
		return arr[i:end]
	}
	return ""
}

// Text reports whether raw is a JSON string with something in it.
func Text(raw string) bool { return len(raw) > 2 && raw[0] == '"' }

// Set reports whether raw is a value other than null, an empty string or
// nothing (gjson's String() != "" for a member).
func Set(raw string) bool { return raw != "" && raw != "null" && raw != `""` }

// View is b as a string without a copy, for reading only: it is valid
// while b is neither changed nor reused.
func View(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
