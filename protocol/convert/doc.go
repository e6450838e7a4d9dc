// Package convert converts requests, responses and streams between the four
// API families of package protocol (design §7). Conversions are pure
// functions over bytes; what a target cannot express is an error wrapping
// ErrUnrepresentable (a 400 in the client's shape naming the field), never a
// silent drop. Native traffic (same family on both sides) is never converted.
//
// # Requests
//
// Request goes through a small canonical model, Req: one decoder per client
// family reads the body into it, one encoder per upstream family writes it,
// so the 12 paths are 4 decoders and 4 encoders (tables in request.go) and
// every path treats system prompts, tools, reasoning and media alike. Bodies
// are read with gjson and written with an append-based writer; schemas, tool
// arguments and other JSON values are copied as their raw text.
//
// Every top-level field of a client request is classified: mapped, dropped
// as a hint (first table), or refused. An unknown top-level field is refused
// (`field "x" cannot be sent to a gemini upstream`) so a new client field is
// never lost unnoticed. Inside messages and tools only the fields named here
// are read.
//
// Hints dropped when the target has no such field. None changes the answer:
// they steer billing, caching, storage, routing or reporting.
//
//	client     field                                          why it is a hint
//	anthropic  metadata (user_id), service_tier, inference_geo    accounting / routing
//	anthropic  cache_control (top level, blocks, tools)           prompt caching
//	anthropic  context_management {clear_thinking, keep: all}      keeps everything: a no-op
//	                                                             (other edits are refused)
//	openai     user, metadata, store, service_tier,               accounting / storage / caching
//	           safety_identifier, prompt_cache_key,
//	           prompt_cache_retention, prediction (latency only)
//	openai     stream_options                                     the engine asks for usage itself
//	openai     messages[].name, image_url.detail                  speaker label / image resolution
//	responses  store, include, prompt_cache_key,                  storage / extra output / caching
//	           prompt_cache_retention, client_metadata,
//	           metadata, user, safety_identifier, service_tier,
//	           truncation
//	responses  reasoning.context, input_image.detail, item ids    reasoning retention / resolution
//	gemini     safetySettings, labels, generationConfig.          filter thresholds (each family applies
//	           mediaResolution, parts[].partMetadata              its own) / billing / media resolution
//
// Sampling knobs that only tune token selection are dropped where the target
// lacks them: seed (anthropic, responses), top_k (openai, responses),
// verbosity (anthropic, gemini), and on an anthropic upstream with thinking
// on, temperature, top_k and a top_p below 0.95 (Anthropic fixes sampling
// while thinking). Knobs that reshape the distribution are refused instead
// (presence/frequency penalty, logit_bias).
//
// Reasoning history is only meaningful to the family that produced it, so
// it goes where the target has a place and is left out otherwise: an OpenAI
// Chat upstream takes no reasoning input; Anthropic takes only signed
// thinking (unsigned thinking, e.g. a Gemini thought without signature, is
// left out) and redacted_thinking only comes from and goes to Anthropic;
// Responses takes reasoning items only with encrypted_content. Signatures
// travel: Anthropic thinking.signature <-> Responses reasoning
// encrypted_content <-> Gemini thoughtSignature (put on the first answer part
// after the thinking: the first functionCall of a step, else the text; a
// signature on a Gemini answer part becomes the signature of the thought
// before it). A Gemini 3 function call replayed without a signature (the
// client family had no place for it) gets Google's documented sentinel
// "skip_thought_signature_validator".
//
// Mappings that look lossy but keep the meaning:
//
//	what                                      how
//	system turn inside the conversation       anthropic, gemini: a user text "<system>\n…\n</system>",
//	(Claude Code, chat clients)               read back as a system turn; openai: system message;
//	                                          responses: developer message
//	several system blocks                     responses: instructions + developer messages
//	tool result with is_error                 openai, responses (no flag): text prefixed "Error: ";
//	                                          gemini: response {"error": …}, else {"output": …}
//	plain-text document                       openai, responses, gemini: a text part
//	                                          "[document: title]\n…"
//	custom (freeform) tool, e.g. Codex exec   anthropic, gemini: a function with one required string
//	                                          argument "input", the grammar appended to the
//	                                          description; calls carry {"input": "…"}
//	Gemini function call ids                  none, or optional: synthesised as
//	                                          call_<content>_<part>_<name> (stable across turns);
//	                                          a functionResponse answers the first open call of its
//	                                          name; toward gemini the name is found from the call id
//	Gemini OpenAPI schemas, uppercase types   lowercase JSON Schema types, nullable -> ["T","null"],
//	                                          propertyOrdering dropped (output order only)
//	schemas toward gemini                     sent as parametersJsonSchema / responseJsonSchema (JSON
//	                                          Schema as is) less $schema and $comment (annotations)
//	max tokens unset                          anthropic requires it: 32000
//	responses function tools                  strict false unless asked (its default is true)
//	responses upstream                        store false; include reasoning.encrypted_content when
//	                                          reasoning is on, so the next turn can carry it
//	openai stream                             stream_options.include_usage true, always
//	gemini mode VALIDATED                     auto
//	structured output -> anthropic            output_config.format {type json_schema, schema}
//
// Refused (ErrUnrepresentable, naming the client's field):
//
//	field                                          refused toward
//	image by URL                                   gemini (not fetched by us)
//	document (PDF) by URL                          openai, gemini
//	file ids, Gemini uploaded files (fileData)     all (they live in one provider's storage)
//	audio input                                    anthropic, responses; openai: other than wav/mp3
//	media inside a tool result                     openai
//	stop sequences                                 responses
//	presence / frequency penalty (non-zero)        anthropic, responses
//	parallel tool calls off                        gemini
//	JSON mode without a schema                     anthropic
//	n / candidateCount > 1, logprobs, logit_bias   all
//	server tools: web_search, namespace, mcp,      all (a namespaced function_call too)
//	googleSearch, codeExecution, Anthropic
//	server tools (type other than custom), …
//	tool_choice allowed_tools / hosted tools,      all
//	Gemini allowedFunctionNames other than one
//	tool with ANY
//	previous_response_id, conversation, prompt,    all (state kept by the upstream)
//	background, cachedContent, Responses
//	context_management
//	Anthropic citations / document context,        all
//	defer_loading, input_examples
//	tool arguments that are not a JSON object      all
//	video, executableCode, other part types        all
//
// Reasoning budgets and efforts map through one table (effort -> budget for
// families with budgets, budget -> effort for families with levels):
//
//	effort    budget   gemini 3 thinkingLevel   anthropic output_config.effort
//	none      0        MINIMAL                  thinking {type: disabled}
//	minimal   1024     MINIMAL                  low
//	low       4096     LOW                      low
//	medium    16384    MEDIUM                   medium
//	high      32768    HIGH                     high
//	xhigh     49152    HIGH                     xhigh
//	max       65536    HIGH                     max
//
//	budget -> effort: 0 none, 1-8191 low, 8192-24575 medium, 24576+ high;
//	dynamic (Gemini -1, Anthropic adaptive without effort): the model decides.
//
// Toward anthropic an explicit budget is sent as thinking {type: enabled,
// budget_tokens} when it fits (1024 <= budget < max_tokens), else as
// adaptive thinking with the budget's effort; an effort is sent as adaptive
// thinking plus output_config.effort. Toward gemini 1.x/2.x models the
// budget is sent as thinkingBudget (-1 dynamic, 0 off), toward later ones
// the level. Visible thinking (Anthropic thinking not omitted, Responses
// reasoning.summary, Gemini includeThoughts) maps to the others' switch.
package convert
