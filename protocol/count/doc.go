// Package count answers token-counting requests locally, without an upstream
// call: Anthropic's POST /v1/messages/count_tokens (Anthropic) and Gemini's
// models/{model}:countTokens (Gemini). Neither provider publishes its
// tokenizer, so a count is an estimate: a real BPE tokenizer (OpenAI's
// o200k_base, github.com/tiktoken-go/tokenizer, whose ranks are compiled into
// the binary: nothing is downloaded) gives the text tokens, and a documented
// model of each provider's prompt adds what the text does not show.
//
// The encoder is built once, lazily, on first use (~80 ms) and is safe for
// concurrent use. Text is cut into o200k_base pieces by a hand-written
// splitter equivalent to the encoding's regular expression (split.go; checked
// against the library on every code point and by a fuzz test) and each
// piece's count is cached, which makes a 64 KB Claude Code request with 24
// tools count in 1.3-1.8 ms (4-7 ms with an empty cache) on a 2-core VM; the
// library alone takes 8-14 ms on the same bytes (BenchmarkAnthropic*).
//
// The bodies are read with gjson, leniently: only the shape is checked
// (ErrInvalid names the field), unknown fields are ignored and unknown
// content blocks or parts are counted by their string values. Package convert
// is not used: its decoders are unexported and refuse what a target cannot
// express, where a count must take anything the client may send.
//
// # Claude
//
// input_tokens = round(f * T) + C, where T is the o200k_base count of the text
// the model reads and C the costs below, in Claude tokens.
//
//	T    system text; message text; tool names, descriptions and input
//	     schemas (compact JSON); tool call names and input (compact JSON);
//	     tool result text; documents' title, context and text; thinking of
//	     the turn in progress only ("thinking blocks from previous assistant
//	     turns are ignored", token counting guide), the turn in progress being
//	     everything after the last user message that is not only tool results;
//	     string values of other blocks (search results, server tool results)
//	f    1.2 for models before Claude Opus 4.7; 1.56 (x1.3) for "Claude 4.7
//	     and later models", Fable and Mythos, which use a tokenizer giving
//	     "roughly 30% more tokens" (token counting guide). 1.2 sits between
//	     the +16% (English) and +30% (Python) a published comparison of the
//	     Claude 3.5 Sonnet and GPT-4o tokenizers measured (VentureBeat, May
//	     2025): gateway traffic is mostly code and instructions.
//	C    3 per request, 3 per message (fitted: basic example)
//	     the tool-use system prompt, by model and tool_choice, when there is
//	     at least one tool: 313/315 (Opus 4, 4.1, Sonnet 4), 496/588 (4.5),
//	     497/589 (4.6), 675/804 (Opus 4.7), ..., table in models.go from the
//	     tool-use guide's pricing section; unlisted newer models take
//	     Opus 5's 286/406, unlisted older ones 346/313
//	     22 per tool definition (fitted: tool example), 10 per tool call and 6
//	     per tool result (assumed)
//	     23 when thinking is enabled or adaptive (fitted: thinking example;
//	     Anthropic does not document it)
//	     images: width*height/750 after scaling the long edge to 1568 px,
//	     at most 1600 ("approximately 1,600 tokens", vision guide); the size is
//	     read from the PNG, JPEG, GIF or WebP header; 1600 when unknown (URL,
//	     file id, undecodable)
//	     PDFs: 2250 per page (midpoint of the PDF guide's "1,500-3,000 tokens
//	     per page"), pages counted from the page objects; 1 page when unknown
//	     redacted thinking: 0 (encrypted, unknowable)
//
// # Gemini
//
// totalTokens = T + C: the o200k_base count as is (Google's examples come out
// within a few tokens, see below) plus
//
//	C    1 per content after the first (fitted: multi-turn examples)
//	     system instruction: its parts, like a content
//	     tools: each function declaration as compact JSON, plus 4 (assumed);
//	     built-in tools as their JSON
//	     images: 258 up to Gemini 2.x (the token guide's example, a photo and
//	     a prompt, counts 258 + 5); Gemini 3: by media resolution, 280, 560,
//	     1120, 2240 (low .. ultra high), per part or per request, 1120 when
//	     unset; PDFs per page 258, Gemini 3 560 (medium) when unset
//	     audio 32 and video 263 tokens per second (token guide), the duration
//	     estimated from the size at 128 kbit/s and 8 Mbit/s; other files 258
//	     cachedContent is not counted (it lives upstream)
//
// # Measured error
//
// Against every published count we found (TestReferenceCounts; sources in
// reference_test.go). "fit" marks a case a constant was fitted on: it shows
// that the model reproduces it, not that it predicts it.
//
//	case                                             published  ours   error
//	Anthropic: system + "Hello, Claude"                      14    14    0.0%  fit
//	Anthropic: get_weather tool + question                  403   403    0.0%  fit
//	Anthropic: large photo + "Describe this image"         1551  1610   +3.8%
//	Anthropic: thinking, 3 messages                          88    88    0.0%  fit
//	Gemini: "The quick brown fox ..."                        10    10    0.0%
//	Gemini: chat, 2 turns                                    10     9  -10.0%  fit
//	Gemini: chat, 3 turns                                    17    17    0.0%  fit
//	Gemini: chat about cats, 2 turns                         24    21  -12.5%  fit
//	Gemini: prompt + photo                                  263   263    0.0%
//	Gemini: "Please give a short summary of this file."       9     9    0.0%
//
// The published cases are small. On large prompts the error is the
// tokenizer's: with f = 1.2, Claude text comes out about 3% high on English
// prose and 8% low on Python code against the published comparison, and
// the Claude 4.7+ factor and the Gemini 3 media costs rest on Anthropic's and
// Google's own rough figures. No count of a large request was published, so
// that error is unmeasured.
package count
