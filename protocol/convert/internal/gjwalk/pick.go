package gjwalk

import (
	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol/jsonwalk"
)

// Pick sets out[i] to obj's member names[i], finding them all in one walk
// of obj; the first of duplicate keys wins, as with Get. A Get per member
// walks obj from its start each time, and all of it for a member obj does
// not have. Tool definitions, whose descriptions and schemas run to
// kilobytes, and stream chunks, read for half a dozen members each
// thousands of times a stream, are read this way: with a Get per member
// tool definitions were a fifth of converting a Claude Code request, and
// chunk members half of converting a Chat stream. The walk is jsonwalk's
// (walk.go); a non-object has no members.
func Pick(obj gjson.Result, names []string, out []gjson.Result) {
	if !obj.IsObject() {
		return
	}
	jsonwalk.Members(obj.Raw, func(k, raw string) bool {
		k = memberName(k)
		for i, n := range names {
			if k == n && !out[i].Exists() {
				out[i] = result(raw)
				break
			}
		}
		return true
	})
}
