// Package request converts a client request body of one API family into
// the body of another (design §7). Conversions are pure functions over
// bytes; what a target cannot express is an error wrapping
// ErrUnrepresentable (a 400 in the client's shape naming the field), never a
// silent drop. Native traffic (same family on both sides) is never converted.
//
// Convert goes through a small canonical model, Req: one decoder per client
// family reads the body into it, one encoder per upstream family writes it,
// so the 12 paths are 4 decoders and 4 encoders (tables in request.go) and
// every path treats system prompts, tools, reasoning and media alike. Bodies
// are read with gjson and written with an append-based writer; schemas, tool
// arguments and other JSON values are copied as their raw text.
//
// Every top-level field of a client request is classified: mapped, dropped
// as a hint (first table), dropped or left out with a conversion note
// (second table), or refused. An unknown top-level field is refused
// (`field "x" cannot be sent to a gemini upstream`) so a new client field is
// never lost unnoticed. Inside messages and tools only the fields named here
// are read.
//
// The rule: a gateway between protocols serves the clients that
// exist. A field is refused only when forwarding or dropping it would change
// the answer in a way the client cannot notice (a wrong result, a silent
// safety loss). A preference the target cannot express is dropped or
// approximated and noted; a tool shape the target lacks is translated into
// one it has and translated back on the way out.
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
// Dropped or left out with a conversion note (ConvertWith returns the notes;
// the engine puts them on the attempt in the log row's attempts):
//
//	what                                              toward       why it can go
//	parallel_tool_calls false,                        gemini       a preference: the client runs
//	disable_parallel_tool_use                                      several calls anyway
//	text.verbosity / verbosity                        anthropic,   a preference about length
//	                                                  gemini
//	presence / frequency penalty (non-zero)           anthropic,   a sampling preference, like top_k
//	                                                  responses
//	hosted web search: Responses web_search*,         all, unless  mapped to the target's own when
//	Anthropic web_search_*, Gemini googleSearch       mapped       the channel sets web_search: true
//	                                                               (Anthropic web_search_20250305,
//	                                                               Gemini googleSearch, Responses
//	                                                               web_search; a Chat upstream has
//	                                                               none); else the model answers
//	                                                               without searching, visibly
//	other hosted tools (file_search, code_interpreter, all          run by the provider; no other
//	image_generation, mcp, …; Anthropic web_fetch,                 upstream can run them, and the
//	code_execution, tool_search; Gemini codeExecution,             answer shows they were not used
//	urlContext, googleMaps, fileSearch)
//	tool_choice naming a hosted tool                  all          goes with the tool
//	web_search_call input items                       all          the record of a search; what it
//	                                                               found is in the answer after it
//
// Sampling knobs that only tune token selection are dropped where the target
// lacks them: seed (anthropic, responses), top_k (openai, responses), and on
// an anthropic upstream with thinking on, temperature, top_k and a top_p
// below 0.95 (Anthropic fixes sampling while thinking). logit_bias is
// refused: it is used to forbid tokens, a constraint, not a preference.
//
// Reasoning history is only meaningful to the family that produced it, so
// it goes where the target has a place and is left out otherwise: an OpenAI
// Chat upstream takes no reasoning input; Anthropic takes only signed
// thinking (unsigned thinking, e.g. a Gemini thought without signature, is
// left out) and redacted_thinking only comes from and goes to Anthropic;
// Responses takes reasoning items only with encrypted_content. A signature
// is valid only at the upstream that minted it (docs/reasoning.md), so
// signatures do not travel between families: every signature a client is
// handed carries its upstream in a tag (package signature; package
// convert's response and stream converters add it, ResponseOptions.Origin
// and StreamOptions.Origin), and a request sends one only back to the
// channel that minted it, byte for byte (Options.Origin); any other is left
// out with a note, the thinking then treated as unsigned. Toward Gemini
// the signature goes on the first answer part after the thinking (the first
// functionCall of a step, else the text; a signature on a Gemini answer
// part becomes the signature of the thought before it), and a Gemini 3
// function call left without one (the client family had no place for it,
// or it was another upstream's) gets Google's documented sentinel
// "skip_thought_signature_validator" on the first call of its step. Toward
// Anthropic with thinking on, a tool loop in progress whose assistant turn
// has no thinking Anthropic signed is sent with thinking off for that
// request (Anthropic refuses it otherwise), with a note.
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
//	custom (freeform) tool, e.g. Codex exec   anthropic, openai, gemini: a function with one required
//	                                          string argument "input", the grammar appended to the
//	                                          description; calls carry {"input": "…"} (openai: most
//	                                          servers of that family have no custom tools); the
//	                                          answer's call goes back to a Responses client as a
//	                                          custom_tool_call with input (streamed as
//	                                          response.custom_tool_call_input.delta, cut between
//	                                          escapes), its output as the target's tool result
//	namespace tools (Codex: in tools and in   a function named FlatToolName(namespace, name):
//	additional_tools input items), calls      "ns__name" when that fits every target's rules
//	and outputs with a namespace field        ([a-zA-Z_][a-zA-Z0-9_-]{0,63}), else cleaned, cut and
//	                                          ended with 8 hex digits of a hash of the pair; the
//	                                          namespace's description goes before each tool's. The
//	                                          way back is a lookup in the table the client's own
//	                                          request yields (convert.StreamOptions.Request,
//	                                          convert.ResponseFor):
//	                                          the call returns with its name and namespace
//	additional_tools input items              tools like those of the tools field
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
// Refused (ErrUnrepresentable, naming the client's field). Each names why
// no translation can be right:
//
//	field                                          toward      why
//	image by URL                                   gemini      Gemini reads only inline data or its own
//	document (PDF) by URL                          openai,     uploaded files; fetching the URL ourselves
//	                                               gemini      would make the gateway fetch any address a
//	                                                           client names, and dropping it answers
//	                                                           without the picture or document
//	file ids, Gemini uploaded files (fileData)     all         they live in one provider's storage: the
//	                                                           other upstream cannot see them
//	audio input                                    anthropic,  the model cannot hear it; dropping it
//	                                               responses;  answers a question it did not get
//	                                               openai
//	                                               other than
//	                                               wav/mp3
//	media inside a tool result                     openai      Chat tool messages hold text only; the
//	                                                           model would answer without the result
//	stop sequences                                 responses   no such parameter: the answer would run
//	                                                           past the stop the client relies on
//	JSON mode without a schema                     anthropic   no way to demand JSON; the client would
//	                                                           get prose where it parses JSON
//	n / candidateCount > 1, logprobs,              all         the client reads data no other family
//	top_logprobs, audio output modalities                      produces (several choices, token
//	                                                           probabilities, speech)
//	logit_bias                                     all         used to forbid tokens: a constraint
//	tool_choice allowed_tools, Gemini              all         a restriction on which tools may be
//	allowedFunctionNames other than one tool with              called; dropping it could let the model
//	ANY, Responses max_tool_calls                              call what the client forbade
//	previous_response_id, conversation, prompt,    all         state kept by the upstream that produced
//	background, cachedContent, Responses                       it: another upstream would answer
//	context_management                                         without the conversation
//	Anthropic client tools with a fixed schema     all         the client runs their calls under a
//	(bash_*, text_editor_*, computer_*, memory_*),             contract only Anthropic models know
//	Gemini computerUse
//	Anthropic context_management edits other       all         they change what the model sees
//	than clear_thinking keep all
//	Anthropic citations / document context,        all         the answer must carry citation blocks
//	defer_loading, input_examples                              or deferred tool loading only Anthropic
//	                                                           provides
//	Gemini declared function result schemas,       all         the target cannot express them and the
//	responseModalities other than text, video,                 answer would silently ignore them
//	executableCode, other part types
//	tool arguments that are not a JSON object,     all         malformed: the client's error (400)
//	a namespace inside a namespace, two tools
//	with one name
//	unknown top-level fields and unknown keys      all         a new client field is never lost unseen
//	of reasoning / text
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
package request
