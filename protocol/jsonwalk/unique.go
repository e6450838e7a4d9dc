package jsonwalk

import (
	"strings"
	"sync"

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

// keySets recycles the key sets of ValidUnique, which runs on every
// request: a set's slices grow while walking and, kept in the walker's
// frame, escaped to the heap, three allocations per request.
var keySets = sync.Pool{New: func() any {
	return &keySet{keys: make([]string, 0, 32), start: make([]int, 0, 16), big: make([]map[string]bool, 0, 16)}
}}

// maxPooledKeys bounds the key slice a pooled set keeps: a request with
// one object of a hundred thousand keys should not pin that much.
const maxPooledKeys = 1024

// reset empties k for reuse, dropping its references to the walked
// document so that a pooled set does not keep a request body alive.
func (k *keySet) reset() {
	if cap(k.keys) > maxPooledKeys {
		k.keys = make([]string, 0, 32)
	} else {
		clear(k.keys[:cap(k.keys)])
		k.keys = k.keys[:0]
	}
	clear(k.big[:cap(k.big)])
	k.start, k.big = k.start[:0], k.big[:0]
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
