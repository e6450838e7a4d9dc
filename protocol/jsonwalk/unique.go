package jsonwalk

import (
	"strings"

	"github.com/tidwall/gjson"
)

// smallObject is how many keys an object may have before its keys are
// looked up in a map rather than compared one by one: request bodies are
// mostly small objects (a message, a content block), for which a map costs
// more than the scan; a body of one object with a hundred thousand keys
// must not cost their square.
const smallObject = 16

// keySet holds the keys of the objects open along a walk, innermost last.
type keySet struct {
	keys  []string          // every open object's keys, in order
	start []int             // where each open object's keys start in keys
	big   []map[string]bool // per open object, its keys once it grew past smallObject
}

// open starts an object.
func (k *keySet) open() {
	k.start = append(k.start, len(k.keys))
	k.big = append(k.big, nil)
}

// close ends the innermost object.
func (k *keySet) close() {
	n := len(k.start) - 1
	k.keys = k.keys[:k.start[n]]
	k.start, k.big = k.start[:n], k.big[:n]
}

// add records key (as written, escapes kept) in the innermost object and
// returns it, unescaped, when that object already has it; "" otherwise.
func (k *keySet) add(key string) string {
	if strings.IndexByte(key, '\\') >= 0 {
		key = gjson.Parse(`"` + key + `"`).Str // "mod\u0065l" is "model"
	}
	n := len(k.start) - 1
	if m := k.big[n]; m != nil {
		if m[key] {
			return key
		}
		m[key] = true
		return ""
	}
	own := k.keys[k.start[n]:]
	for _, have := range own {
		if have == key {
			return key
		}
	}
	if len(own) < smallObject {
		k.keys = append(k.keys, key)
		return ""
	}
	m := make(map[string]bool, 2*smallObject)
	for _, have := range own {
		m[have] = true
	}
	m[key] = true
	k.big[n] = m
	return ""
}
