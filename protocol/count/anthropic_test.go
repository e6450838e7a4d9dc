package count

import (
	"errors"
	"strings"
	"testing"
)

func mustAnthropic(t *testing.T, body string) int {
	t.Helper()
	n, err := Anthropic([]byte(body))
	if err != nil {
		t.Fatalf("Anthropic(%s): %v", body, err)
	}
	return n
}

const weatherTool = `{"name":"get_weather","description":"Get the current weather in a given location",` +
	`"input_schema":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}`

func TestAnthropicMoreTextMoreTokens(t *testing.T) {
	prev := 0
	for _, words := range []int{1, 2, 10, 100, 1000} {
		text := strings.Repeat("counting tokens locally ", words)
		n := mustAnthropic(t, `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"`+text+`"}]}`)
		if n <= prev {
			t.Errorf("%d words: %d tokens, not more than %d for fewer words", words, n, prev)
		}
		prev = n
	}
}

func TestAnthropicCountsSystemAndTools(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	bare := mustAnthropic(t, `{"model":"claude-sonnet-4-5",`+msgs+`}`)
	sys := mustAnthropic(t, `{"model":"claude-sonnet-4-5","system":"You are a careful reviewer of Go code.",`+msgs+`}`)
	sysBlocks := mustAnthropic(t, `{"model":"claude-sonnet-4-5","system":[{"type":"text","text":"You are a careful reviewer of Go code.","cache_control":{"type":"ephemeral"}}],`+msgs+`}`)
	if sys <= bare || sysBlocks != sys {
		t.Errorf("system: bare %d, string %d, blocks %d; want string = blocks > bare", bare, sys, sysBlocks)
	}

	one := mustAnthropic(t, `{"model":"claude-sonnet-4-5","tools":[`+weatherTool+`],`+msgs+`}`)
	// Claude Sonnet 4.5: 496 tokens of tool-use system prompt for auto.
	if one-bare < 496+10 {
		t.Errorf("one tool adds %d tokens, want the 496-token tool prompt plus the definition", one-bare)
	}
	two := mustAnthropic(t, `{"model":"claude-sonnet-4-5","tools":[`+weatherTool+`,`+strings.Replace(weatherTool, "get_weather", "get_forecast", 1)+`],`+msgs+`}`)
	if two <= one {
		t.Errorf("a second tool: %d tokens, not more than %d", two, one)
	}
	anyChoice := mustAnthropic(t, `{"model":"claude-sonnet-4-5","tools":[`+weatherTool+`],"tool_choice":{"type":"any"},`+msgs+`}`)
	if anyChoice-one != 588-496 {
		t.Errorf("tool_choice any vs auto: %d tokens apart, want %d (documented prompts)", anyChoice-one, 588-496)
	}
	noTools := mustAnthropic(t, `{"model":"claude-sonnet-4-5","tools":[],"tool_choice":{"type":"none"},`+msgs+`}`)
	if noTools != bare {
		t.Errorf("no tools: %d, want %d (no tool prompt without tools)", noTools, bare)
	}
}

func TestAnthropicModelTokenizer(t *testing.T) {
	text := strings.Repeat("The gateway answers count_tokens locally. ", 200)
	body := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"` + text + `"}]}`
	}
	old, newer := mustAnthropic(t, body("claude-sonnet-4-6")), mustAnthropic(t, body("claude-opus-4-7"))
	if r := float64(newer) / float64(old); r < 1.25 || r > 1.35 {
		t.Errorf("Opus 4.7 / Sonnet 4.6 = %.2f, want ~1.3 (the newer tokenizer)", r)
	}
}

func TestAnthropicThinkingOfCurrentTurnCounts(t *testing.T) {
	thinking := strings.Repeat("Let me check the tests first. ", 50)
	history := `{"role":"user","content":"fix the bug"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"` + thinking + `","signature":"c2ln"},` +
		`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"location":"Paris"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"}]}`
	inTurn := mustAnthropic(t, `{"model":"claude-sonnet-4-5","messages":[`+history+`]}`)
	noThinking := mustAnthropic(t, `{"model":"claude-sonnet-4-5","messages":[`+strings.Replace(history, thinking, "", 1)+`]}`)
	if inTurn-noThinking < 300 {
		t.Errorf("thinking in the turn in progress adds %d tokens, want its text counted", inTurn-noThinking)
	}
	// After a new prompt the same thinking belongs to an earlier turn.
	later := mustAnthropic(t, `{"model":"claude-sonnet-4-5","messages":[`+history+`,{"role":"assistant","content":"done"},{"role":"user","content":"thanks"}]}`)
	laterNo := mustAnthropic(t, `{"model":"claude-sonnet-4-5","messages":[`+strings.Replace(history, thinking, "", 1)+`,{"role":"assistant","content":"done"},{"role":"user","content":"thanks"}]}`)
	if later != laterNo {
		t.Errorf("earlier turn's thinking: %d vs %d without it, want it ignored", later, laterNo)
	}
}

func TestAnthropicImages(t *testing.T) {
	img := func(src string) string {
		return `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"image","source":` + src + `}]}]}`
	}
	base := mustAnthropic(t, `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[]}]}`)
	small := mustAnthropic(t, img(`{"type":"base64","media_type":"image/png","data":"`+pngHeader(200, 200)+`"}`)) - base
	if small != 54 { // vision guide: 200x200 ~ 54 tokens
		t.Errorf("200x200 image: %d tokens, want 54", small)
	}
	url := mustAnthropic(t, img(`{"type":"url","url":"https://example.com/a.png"}`)) - base
	junk := mustAnthropic(t, img(`{"type":"base64","media_type":"image/png","data":"bm90IGFuIGltYWdlIGF0IGFsbA=="}`)) - base
	if url != claudeImageMax || junk != claudeImageMax {
		t.Errorf("unknown size: url %d, undecodable %d; want %d", url, junk, claudeImageMax)
	}
	wide := claudeImageTokens(3136, 400) // scaled to 1568x200
	if wide != 419 {
		t.Errorf("3136x400 = %d tokens, want 419 (scaled to 1568x200)", wide)
	}
}

func TestAnthropicInvalid(t *testing.T) {
	for _, body := range []string{
		``, `null`, `[]`, `"text"`, `{`, `{"messages":"hi"}`, `{"model":"x"}`,
		`{"messages":[1]}`, `{"messages":[{"role":"robot","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":5}]}`, `{"messages":[{"role":"user","content":[1]}]}`,
		`{"system":5,"messages":[]}`, `{"system":[1],"messages":[]}`,
		`{"tools":{},"messages":[]}`, `{"tools":[1],"messages":[]}`,
	} {
		n, err := Anthropic([]byte(body))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Anthropic(%s) = %d, %v; want ErrInvalid", body, n, err)
		}
	}
}

func TestAnthropicUnknownBlocksCounted(t *testing.T) {
	base := mustAnthropic(t, `{"messages":[{"role":"user","content":[]}]}`)
	n := mustAnthropic(t, `{"messages":[{"role":"user","content":[{"type":"search_result","source":"https://example.com","title":"Tokens",`+
		`"content":[{"type":"text","text":"Counting tokens is done locally by the gateway."}]}]}]}`)
	if n-base < 10 {
		t.Errorf("search_result block adds %d tokens, want its text counted", n-base)
	}
}

func FuzzAnthropic(f *testing.F) {
	for _, c := range anthropicRefs {
		f.Add([]byte(c.body))
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","data":"JVBERi0="}}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"image","source":{"type":"base64","data":"UklGRgAAAABXRUJQVlA4"}}]}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := Anthropic(body)
		if err == nil && n < 0 {
			t.Fatalf("negative count %d", n)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
	})
}
