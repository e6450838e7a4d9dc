// Package responsesws serves the OpenAI Responses API over a WebSocket
// (what Codex uses when its provider sets supports_websockets = true):
// one downstream socket, many turns, each turn a `response.create` text
// frame answered by the Responses stream events, one per text frame.
//
// Wire format, from the OpenAI documentation of WebSocket mode
// (developers.openai.com/api/docs/guides/websocket-mode and
// /api/reference/resources/responses/websocket-events) and from what
// Codex CLI 0.171 was captured sending to a local listener:
//
//   - the client upgrades GET /v1/responses (Codex adds the header
//     OpenAI-Beta: responses_websockets=2026-02-06, Session-Id, Thread-Id);
//   - each turn is {"type":"response.create", ...the POST /v1/responses
//     body fields...}; `stream` is implicit, `background` unsupported;
//   - `generate: false` is a warm-up: the server answers
//     response.created / response.in_progress / response.completed with
//     no output and generates nothing; its id can be chained;
//   - later turns send previous_response_id and only the new input items;
//   - server events are the Responses stream events' JSON, one per text
//     frame; a failure is {"type":"error","status":N,"error":{"type",
//     "code","message","param"}}.
//
// The package knows nothing of routing: a Turn function (the engine's
// normal request path) serves each turn as a plain HTTP Responses request
// and hands back its SSE body. Continuity is kept here, so a turn can be
// served by any candidate: previous_response_id is replaced by the
// transcript of the chain it names (the engine's upstreams see stateless
// requests with store:false, as Codex sends them).
package responsesws
