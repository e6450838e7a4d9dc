package jsonwalk

// Valid reports whether s is exactly one JSON value (RFC 8259) with only
// whitespace around it, as encoding/json.Valid does; like it, Valid leaves
// UTF-8 to the caller (the engine checks utf8.Valid first).
//
// It replaces gjson.ValidBytes on every request's admission: an agent's
// request is tens to hundreds of kilobytes, mostly text inside strings,
// and gjson checked it a byte at a time (134 µs for an 85 KB Claude Code
// request). Strings are checked eight bytes at a time here. Nesting is
// tracked on a small stack instead of by recursion, so a body of ten
// thousand '[' costs no goroutine stack.
func Valid(s string) bool { return ValidMembers(s, nil) }

// ValidMembers is Valid that also calls fn, when s is an object, with
// each of its members (the key as written, escapes kept, and the raw
// value) in the same pass: admission needs both, and a second walk of an
// agent's request was a third of what the two cost. fn may have been
// called for the members before a fault.
func ValidMembers(s string, fn func(key, val string)) bool {
	ok, _ := walkValid(s, fn, nil)
	return ok
}

// ValidUnique is ValidMembers that also finds a key written twice in one
// object, at any depth (RFC 8259 §4: such a document's meaning is
// unpredictable, as parsers keep the first or the last). dup is the first
// such key, unescaped, and "" when there is none; a document with one is
// still reported valid.
func ValidUnique(s string, fn func(key, val string)) (ok bool, dup string) {
	k := keySets.Get().(*keySet)
	ok, dup = walkValid(s, fn, k)
	k.reset()
	keySets.Put(k)
	return ok, dup
}

// walkValid is ValidMembers; with keys set it also looks for duplicates.
func walkValid(s string, fn func(key, val string), keys *keySet) (bool, string) {
	var small [64]byte
	open := small[:0] // '{' or '[' per level
	// A member of the outermost object is under way: its key, and where
	// its value starts.
	var key string
	member, valStart := false, 0
	dup := ""
	startMember := func(i int) int {
		i, k := memberKey(s, i)
		if keys != nil && i >= 0 && dup == "" {
			dup = keys.add(k)
		}
		if fn != nil && len(open) == 1 && i >= 0 {
			key, member, valStart = k, true, i
		}
		return i
	}
	i := skipSpace(s, 0)
	for {
		// A value starts at i.
		if i >= len(s) {
			return false, dup
		}
		switch c := s[i]; c {
		case '{', '[':
			open = append(open, c)
			i = skipSpace(s, i+1)
			if i < len(s) && s[i] == c+2 { // '}' and ']' are two past '{' and '['
				open = open[:len(open)-1]
				i++
				break
			}
			if c == '{' {
				if keys != nil {
					keys.open()
				}
				if i = startMember(i); i < 0 {
					return false, dup
				}
			}
			continue
		case '"':
			if i = validString(s, i); i < 0 {
				return false, dup
			}
		case 't':
			if i = literal(s, i, "true"); i < 0 {
				return false, dup
			}
		case 'f':
			if i = literal(s, i, "false"); i < 0 {
				return false, dup
			}
		case 'n':
			if i = literal(s, i, "null"); i < 0 {
				return false, dup
			}
		default:
			if i = validNumber(s, i); i < 0 {
				return false, dup
			}
		}
		// A value ended at i: close what it ends, then expect the next.
		for {
			if member && len(open) == 1 {
				fn(key, s[valStart:i])
				member = false
			}
			i = skipSpace(s, i)
			if len(open) == 0 {
				return i == len(s), dup
			}
			if i >= len(s) {
				return false, dup
			}
			top := open[len(open)-1]
			if s[i] == top+2 {
				if keys != nil && top == '{' {
					keys.close()
				}
				open = open[:len(open)-1]
				i++
				continue
			}
			if s[i] != ',' {
				return false, dup
			}
			i = skipSpace(s, i+1)
			if top == '{' {
				if i = startMember(i); i < 0 {
					return false, dup
				}
			}
			break
		}
	}
}

// memberKey checks `"key" :` at s[i] and returns where its value starts
// (or -1) and the key as written.
func memberKey(s string, i int) (int, string) {
	if i >= len(s) || s[i] != '"' {
		return -1, ""
	}
	end := validString(s, i)
	if end < 0 {
		return -1, ""
	}
	key := s[i+1 : end-1]
	i = skipSpace(s, end)
	if i >= len(s) || s[i] != ':' {
		return -1, ""
	}
	return skipSpace(s, i+1), key
}

func literal(s string, i int, word string) int {
	if len(s)-i < len(word) || s[i:i+len(word)] != word {
		return -1
	}
	return i + len(word)
}

// validString checks the string that starts at s[i] (a quote) and returns
// the index just past it, or -1: no control byte below 0x20 inside, and
// only the escapes JSON defines.
func validString(s string, i int) int {
	j := i + 1
	for {
		j = Plain(s, j, false)
		if j >= len(s) || s[j] < 0x20 {
			return -1
		}
		if s[j] == '"' {
			return j + 1
		}
		// A backslash.
		if j+1 >= len(s) {
			return -1
		}
		switch s[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if j+6 > len(s) || !isHex(s[j+2]) || !isHex(s[j+3]) || !isHex(s[j+4]) || !isHex(s[j+5]) {
				return -1
			}
			j += 6
		default:
			return -1
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validNumber checks the number at s[i] and returns the index just past
// it, or -1: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s string, i int) int {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(s, i)
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		if i+1 >= len(s) || !isDigit(s[i+1]) {
			return -1
		}
		i = digits(s, i+1)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return -1
		}
		i = digits(s, i)
	}
	return i
}

func digits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
