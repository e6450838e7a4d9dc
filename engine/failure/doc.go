// Package failure turns the outcome of one upstream attempt into a value the
// engine acts on: which component to cool (Scope), what went wrong (Kind),
// whether another candidate may be tried, and the upstream's reset hint.
//
// It is pure: no I/O, no mutable state, no clock of its own (reset times
// given as dates are measured against Input.Now, and ignored when it is
// zero). The engine calls Classify once per attempt, and SoftError on the
// first events of a stream it has not yet forwarded to the client. This is
// design §6.
//
// # Mapping
//
// Rules are applied top to bottom; the first that matches wins. "Texts" are
// case-insensitive substrings of the upstream error (type, code, status,
// details[].reason and message, or the raw body when it is not JSON); the
// lists live in rules.go.
//
// On a 4xx other than 429 the message is not searched: a provider's answer
// to a bad request quotes the request (Gemini: Unknown name
// "API_KEY_INVALID"), and a client must not be able to cool a key, URL or
// model with the names it sends. There the texts are searched in the
// structured fields only, and the message counts only when it opens with
// a provider's own sentence (keyLeads, regionLeads, modelGoneRe).
//
//	| input                                              | Kind       | Scope   | Retry | ClientFault |
//	|----------------------------------------------------|------------|---------|-------|-------------|
//	| Canceled (the client went away)                    | canceled   | -       | no    | no          |
//	| Timeout (first-byte or non-stream timer fired)     | timeout    | url     | yes   | no          |
//	| no response; Err is context.Canceled               | canceled   | -       | no    | no          |
//	| no response; Err is a timeout (deadline, dial)     | timeout    | url     | yes   | no          |
//	| no response; any other Err (refused, reset, DNS,   | network    | url     | yes   | no          |
//	|   TLS, EOF before headers) or no Err at all        |            |         |       |             |
//	| 2xx whose body is an error (SoftError, below)      | as the embedded error, mapped like a status  |
//	| 2xx, body broke off (Err set)                      | network    | url     | yes   | no          |
//	| 2xx otherwise                                      | "" (ok)    | -       | no    | no          |
//	| any error status, region texts                     | auth       | url     | yes   | no          |
//	| any error status, invalid/expired key or billing   | auth       | key     | yes   | no          |
//	|   texts (Gemini 400 API_KEY_INVALID, Anthropic 400 |            |         |       |             |
//	|   "credit balance is too low", ...)                |            |         |       |             |
//	| 401, 402, 403                                      | auth       | key     | yes   | no          |
//	| 429 with overload texts (model_cooldown,           | rate_limit | model   | yes   | no          |
//	|   overloaded, capacity, relay load warnings, ...)  |            |         |       |             |
//	| 429                                                | rate_limit | key     | yes   | no          |
//	| 404, 410                                           | not_found  | model   | yes   | no          |
//	| 408                                                | timeout    | url     | yes   | no          |
//	| 400, 413, 422 with model-missing texts             | not_found  | model   | yes   | no          |
//	| 400, 413, 422                                      | client     | -       | no    | yes         |
//	| other 4xx                                          | client     | -       | no    | yes         |
//	| 5xx, 529 with model-missing texts                  | not_found  | model   | yes   | no          |
//	| 5xx, 529                                           | server     | model   | yes   | no          |
//	| anything else (1xx, 3xx)                           | server     | url     | yes   | no          |
//
// # Soft errors
//
// An HTTP 2xx body is an error when it is
//
//   - JSON (or any element of a JSON array) with a non-null "error"
//     member, "type":"error", or "type":"response.failed";
//   - server-sent events with an "event: error", an "event: response.failed",
//     or a data payload shaped like the JSON above, before "[DONE]";
//   - plain text containing one of the load warnings (overloadTexts: model,
//     server) or rate-limit texts (rateLimitTexts: key, rate_limit).
//
// The Body handed in is what has not been forwarded to the client yet, so an
// error anywhere in it still allows a retry. The embedded error is given the
// status it stands for: the first of error.code, error.status and error.type
// that is a known name in the Anthropic, OpenAI or Gemini vocabulary
// (errorStatus in body.go), else a numeric error.code, else 500. It then
// follows the table above, so rate-limit kinds count as 429.
//
// # Reset hints
//
// RetryAfter is set for failures other than client and canceled, from the
// first of: the retry-after-ms header; retry-after (seconds or an HTTP date,
// against Input.Now); for rate limits, the anthropic-ratelimit-{requests,
// tokens,input-tokens,output-tokens}-reset headers (RFC 3339) and OpenAI's
// x-ratelimit-reset-{requests,tokens} ("6m0s", "20ms", or bare seconds), the
// latest among the limits whose matching -remaining header is 0 or absent;
// Gemini's google.rpc.RetryInfo retryDelay in the body ("7s"); for rate
// limits, "try again in 1.5s" / "retry in 47s" in the message. A hint is
// capped at MaxHint.
//
// # Messages
//
// Outcome.Message is the upstream's own short error text (or the transport
// error), cut to about 300 bytes, with anything that looks like a credential
// replaced by "[redacted]": sk-…, AIza…, Bearer tokens, key=/token= query
// parameters, the key OpenAI echoes after "API key provided:", and long
// random-looking tokens.
package failure
