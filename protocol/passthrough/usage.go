package passthrough

import (
	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol/convert"
)

// Usage reads the token usage of a relayed endpoint's JSON answer, in
// convert.Usage's convention. The endpoints report it in two shapes:
//
//	embeddings, completions:        usage.prompt_tokens (+ completion_tokens)
//	images, audio transcriptions:   usage.input_tokens, usage.output_tokens
//
// with cached prompt tokens under prompt_tokens_details/input_tokens_details
// where reported. Moderations and speech report none (zero Usage); audio
// billed by duration ({"type":"duration"}) has no token counts either.
func Usage(body []byte) convert.Usage {
	u := gjson.GetBytes(body, "usage")
	if !u.IsObject() {
		return convert.Usage{}
	}
	if u.Get("prompt_tokens").Exists() {
		return convert.Usage{
			Input:     u.Get("prompt_tokens").Int(),
			Output:    u.Get("completion_tokens").Int(),
			CacheRead: u.Get("prompt_tokens_details.cached_tokens").Int(),
		}
	}
	return convert.Usage{
		Input:     u.Get("input_tokens").Int(),
		Output:    u.Get("output_tokens").Int(),
		CacheRead: u.Get("input_tokens_details.cached_tokens").Int(),
	}
}
