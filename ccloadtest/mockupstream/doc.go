// Package mockupstream is a mock upstream LLM API that speaks the four
// families ccload proxies: Anthropic Messages, OpenAI Chat Completions,
// OpenAI Responses and Gemini generateContent, streaming and not. The demo,
// the end-to-end tests and the benchmarks point channels at it, and the
// official SDKs parse its output (see the tests), so its wire format follows
// the real APIs: event names and order, indices, ids, usage blocks, error
// shapes and `[DONE]`.
//
// # Endpoints
//
// Paths are matched by suffix, so a channel URL with a path prefix
// (http://host/relay/v1/messages) and an exact endpoint URL both work:
//
//	POST …/messages                        Anthropic (x-api-key or Bearer; anthropic-version required)
//	POST …/messages/count_tokens           Anthropic token count
//	POST …/chat/completions                OpenAI Chat (Bearer)
//	POST …/responses                       OpenAI Responses (Bearer), also /backend-api/codex/responses
//	POST …/models/{model}:generateContent  Gemini (x-goog-api-key or ?key=)
//	POST …/models/{model}:streamGenerateContent?alt=sse
//	POST …/models/{model}:countTokens
//	GET  …/v1beta/models                   Gemini model list
//	GET  …/models                          OpenAI model list (Anthropic's shape when anthropic-version is sent)
//
// Every request is recorded (see [Server.Requests]), including rejected ones.
// A request without a credential gets the family's 401; so does one whose
// credential is not in [Options.Keys] when that list is set. Generation
// requests are checked like the real APIs check them (valid JSON, model,
// Anthropic max_tokens and messages, Chat messages, Gemini contents) and get
// the family's 400 otherwise, which catches a gateway that converts badly.
//
// # Replies
//
// [Options.Script] decides the [Reply] for each request; without one (or when
// the script calls it) [DefaultReply] answers with [DefaultText] and
// [DefaultUsage], changed by the scenarios the request names.
//
// # Scenarios
//
// A scenario is named by the request header "x-mock-scenario" (a
// comma-separated list; an unknown name is a 400) or by a model name that
// ends in "mock-" and the scenario, such as "claude-sonnet-4-6-mock-fail-500"
// or "mock-think", so the demo and manual tests need no Go code:
//
//	fail-400    400 invalid request (a client fault: a gateway must not retry)
//	fail-401    401 authentication error (key scope)
//	fail-429    429 rate limit with "retry-after: 2"
//	fail-500    500 server error
//	fail-529    overloaded: 529 for Anthropic, 503 for the others
//	soft-error  HTTP 200 whose body is an error: an SSE error event for a
//	            stream, the family's error JSON otherwise
//	reset       connection reset before any byte of the response
//	cut         stream (or body) cut off abruptly after 3 events (half the body)
//	slow        1.5 s before the first byte, 150 ms between events
//	tool        a call to the first tool the request declares, with arguments
//	            built from its schema; text once the last message is a tool
//	            result, so an agent loop ends
//	think       a reasoning block before the text (thinking + signature)
//	shell       for real agent CLIs: when the conversation holds
//	            "ccload-shell-<nonce>", a call to the client's own shell tool
//	            (Claude Code Bash, Codex exec_command or code-mode exec,
//	            Gemini CLI run_shell_command) printing "ccload-tool-ok-<nonce>";
//	            then a text saying whether the tool result carried it.
//	            Structured-output requests get a JSON object fitting the schema.
//
// # Family shapes of reasoning
//
// Reply.Thinking and Reply.ThinkingSignature become an Anthropic thinking
// block (thinking_delta, then signature_delta), a Responses reasoning item
// (summary_text parts; the signature as encrypted_content), Chat
// "reasoning_content" deltas (the de facto field of OpenAI-compatible
// servers; Chat has no place for a signature) and Gemini parts with
// "thought": true, the last of which carries "thoughtSignature" (base64 on
// the wire: a signature that is not valid base64 is encoded).
//
// # Usage
//
// [Usage] counts the way Anthropic does: Input excludes CacheRead and
// CacheWrite, Output includes Reasoning. Each family reports it natively:
// OpenAI prompt_tokens and input_tokens and Gemini promptTokenCount are
// Input+CacheRead+CacheWrite; Gemini candidatesTokenCount is
// Output-Reasoning.
//
// # Streams
//
// Every SSE event is flushed on its own, so a test can prove that a gateway
// does not buffer. Gemini events end in "\r\n\r\n" as Google's servers send
// them, the others in "\n\n".
package mockupstream
