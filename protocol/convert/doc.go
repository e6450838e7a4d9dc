// Package convert converts requests, responses and streams between the four
// API families of package protocol (design §7). Conversions are pure
// functions over bytes; what a target cannot express is an error wrapping
// ErrUnrepresentable (a 400 in the client's shape naming the field), never a
// silent drop. Native traffic (same family on both sides) is never converted.
//
// # Layout
//
// Requests and answers share nothing but the families, so they are two
// packages. Subpackage request holds the request side whole: its canonical
// model (Req), one decoder per client family, one encoder per upstream
// family, the JSON writer they write with and the tool and schema writer
// every encoder shares; Request and RequestWith here hand over to it, so
// the engine converts every direction through this one import. This
// package holds the answers: responses (whole bodies, response*.go),
// streams (SSE event by event, stream*.go), upstream errors (error.go) and
// usage counts (usage.go). Responses and streams stay together because
// they are one model read two ways: the same canonical blocks, stop
// reasons, usage writers, ids and clock (stream.go), a response being the
// blocks of a stream kept whole; splitting them would only export that
// model between two packages. The gjson walks both sides read bodies with
// are in internal/gjwalk.
//
// # Responses and streams
//
// Response, NewStream and ConvertError go through a canonical model too. One
// decoder per upstream family reads a body or an SSE stream into canonical
// blocks (text; thinking with its signature; redacted thinking; a tool call
// with id, name and JSON arguments), a stop reason and a Usage; one encoder
// per client family writes them. The tables are streamDecoders and
// streamEncoders (stream.go) and responseDecoders and responseEncoders
// (response.go). A stream is a sequence of canonical events: message start,
// block start, delta (text, thinking, signature, argument fragment), block
// stop, then finish (stop reason, usage) or error. The pipe between decoder
// and encoder keeps that grammar (one block open at a time, opened when a
// decoder skips the step), so each encoder only counts its own indices.
// Events are read with gjson, string deltas are carried as their raw JSON
// literals (never unescaped and re-escaped), and output is appended to a
// reused buffer: a converted event costs no allocation.
//
// Blocks in each family:
//
//	block     anthropic              openai chat            responses                    gemini
//	text      text                   content                message, output_text part    text part
//	thinking  thinking + signature   reasoning_content      reasoning: summary_text,     thought part (thought: true);
//	                                 (no signature)         signature = encrypted_content  signature = thoughtSignature
//	                                                                                     on the next part
//	redacted  redacted_thinking      -                      reasoning with id            -
//	                                                        rs_redacted_..., data =
//	                                                        encrypted_content
//	tool      tool_use: id, input    tool_calls: id,        function_call: call_id,      functionCall: id, args, sent
//	call                             arguments text         arguments text               whole; no id -> GeminiCallID
//
// Upstream reasoning read as thinking: Anthropic thinking; OpenAI chat
// reasoning_content or reasoning; Responses summary parts (joined with a
// blank line) or reasoning_text; Gemini thought parts. A Gemini
// thoughtSignature on an answer part signs the thinking block just before
// it, or an empty thinking block of its own (Anthropic clients need signed
// blocks to continue a tool loop); the request side applies the same rule.
// Toward a Gemini client a signature rides on the next part, as Gemini puts
// it, when it is standard base64 (see GeminiThoughtSignature).
//
// Stop reasons:
//
//	canonical      anthropic                      openai          responses (status, reason)    gemini
//	end            end_turn                       stop            completed                     STOP
//	stop sequence  stop_sequence                  stop            completed                     STOP
//	max tokens     max_tokens                     length          incomplete, max_output_tokens MAX_TOKENS
//	context full   model_context_window_exceeded  length          incomplete, max_output_tokens MAX_TOKENS
//	tool use       tool_use                       tool_calls      completed (function_call      STOP (functionCall parts)
//	                                                              items)
//	refusal        refusal                        content_filter  incomplete, content_filter    SAFETY
//	pause          pause_turn                     stop            completed                     STOP
//
// Read only: Gemini RECITATION, LANGUAGE, BLOCKLIST, PROHIBITED_CONTENT,
// SPII, IMAGE_* and a prompt blocked by promptFeedback are refusals; OTHER,
// MALFORMED_FUNCTION_CALL and other reasons are end; OpenAI function_call is
// tool use; a Responses refusal part makes a completed response a refusal,
// and so does an OpenAI chat refusal. A response with tool calls that ends
// normally reports tool use in every family (Gemini says STOP, some
// OpenAI-compatible servers say stop).
//
// Usage: Input counts every prompt token, cached or not; Output every
// generated token, reasoning included. Read from and written to:
//
//	Usage       anthropic                    openai chat                  responses                    gemini
//	Input       input_tokens +               prompt_tokens                input_tokens                 promptTokenCount +
//	            cache_read_input_tokens +                                                              toolUsePromptTokenCount
//	            cache_creation_input_tokens
//	CacheRead   cache_read_input_tokens      prompt_tokens_details.       input_tokens_details.        cachedContentTokenCount
//	                                         cached_tokens                cached_tokens
//	CacheWrite  cache_creation_input_tokens  prompt_tokens_details.       input_tokens_details.        - (not written)
//	                                         cache_write_tokens           cache_write_tokens
//	Output      output_tokens                completion_tokens            output_tokens                candidatesTokenCount +
//	                                                                                                   thoughtsTokenCount
//	Reasoning   output_tokens_details.       completion_tokens_details.   output_tokens_details.       thoughtsTokenCount
//	            thinking_tokens              reasoning_tokens             reasoning_tokens
//	in streams  message_start (input so      the usage chunk (choices:    response.completed /         usageMetadata of the
//	            far), message_delta (all)    []) before [DONE]            response.incomplete          last chunk
//
// Anthropic's message_delta carries the whole usage again, input and cache
// counts included, because an upstream other than Anthropic reports input
// only at the end. StreamOptions.OmitChatUsage leaves out the chat usage
// chunk for a client that did not ask for stream_options.include_usage.
//
// Ids and times: the client's message id is the upstream's with its family
// prefix swapped (msg_X, chatcmpl-X, resp_X, X for Gemini), or a random one
// when the upstream has none; Responses item ids are msg_, rs_ or fc_ + that
// base + _ + the output index. created is the upstream's, else now. The model
// reported is always the client-visible name the engine passes.
//
// Stream failures. An upstream error event (Anthropic error, OpenAI chat
// {"error":…}, Responses error and response.failed, Gemini {"error":…})
// becomes the client's error event with the upstream's message and a status
// from its type or code (overloaded_error 529, rate_limit_exceeded and
// RESOURCE_EXHAUSTED 429, …). A stream that ends before saying how it
// finished (no message_delta, finish_reason, response.completed or
// finishReason) is truncated: Close sends a 502 error event rather than pass
// a cut answer off as complete. One that finished but left out its
// terminator (message_stop, [DONE]) is closed normally. An event that is not
// JSON, OpenAI tool call fragments that go back to an earlier call, and tool
// arguments that are not a JSON object toward Gemini (which needs an object)
// fail with 502. In every case Event or Close returns a *StreamError after
// the client got its error event.
//
// What a client family cannot hold is left out (the upstream has already
// answered, so there is nothing to refuse):
//
//	left out                                           for clients
//	thinking signatures, redacted thinking             openai chat (no field)
//	redacted thinking; an untagged signature that is   gemini (its SDKs reject a chunk whose
//	not standard base64 (tagged ones are encoded)      thoughtSignature is not base64)
//	Anthropic server tool blocks (server_tool_use,     all others
//	web_search_tool_result, …); Responses items other
//	than message, reasoning, function_call,
//	custom_tool_call (read as a call with {"input"});
//	Gemini parts other than text, thought,
//	functionCall
//	citations, annotations, logprobs; choices and      all others
//	candidates after the first
//	the order of text and tool calls; several text     openai chat (one content field; the
//	blocks are joined with a blank line                calls follow the text)
//	the request's parameters in the response object    responses (written as defaults:
//	(instructions, tools, temperature, …)              the converter does not see the request)
package convert
