package responsesws

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// create is one parsed response.create frame.
type create struct {
	body     []byte   // the HTTP body: the frame without type, generate, previous_response_id and input
	prev     string   // previous_response_id, "" when none
	generate bool     // false for Codex's warm-up
	input    [][]byte // the new input items, each one JSON value
	model    string
}

// turnError is an error event ccload sends itself.
type turnError struct {
	status  int
	code    string
	message string
	param   string // the request field at fault, "" = null
}

// notFound is the error OpenAI sends for a previous_response_id it cannot
// resolve, in WebSocket mode too (the websocket-mode guide,
// developers.openai.com/api/docs/guides/websocket-mode, names the code
// previous_response_not_found and says to resend the full input without
// the id): status 400, type invalid_request_error, param
// previous_response_id, message "Previous response with id '…' not
// found.", the shape clients match on (e.g. the openai-agents and Codex
// recovery paths look for that code and that message).
func notFound(id string) *turnError {
	return &turnError{status: 400, code: "previous_response_not_found", param: "previous_response_id",
		message: "Previous response with id '" + id + "' not found."}
}

// parseCreate reads a client frame. Only response.create is a turn; the
// fields that exist only on the socket (type, generate) and the chain id
// (replaced by the transcript) never reach an HTTP upstream body.
func parseCreate(frame []byte) (create, *turnError) {
	ok, dup := jsonwalk.ValidUnique(jsonwalk.View(frame), nil)
	if !ok || !gjson.ParseBytes(frame).IsObject() {
		return create{}, &turnError{status: 400, code: "invalid_json", message: "the frame is not a JSON object"}
	}
	if dup != "" {
		// As for an HTTP body (engine checkInput): the first of two keys
		// is what ccload reads, the last may be what an upstream reads.
		return create{}, &turnError{status: 400, code: "invalid_json", message: "the frame has the key " + strconv.Quote(dup) + " twice in one object"}
	}
	if t := gjson.GetBytes(frame, "type").Str; t != "response.create" {
		return create{}, &turnError{status: 400, code: "invalid_event_type", message: fmt.Sprintf("unsupported client event type %q (want response.create)", t)}
	}
	c := create{generate: true, model: gjson.GetBytes(frame, "model").Str}
	if g := gjson.GetBytes(frame, "generate"); g.Exists() && !g.Bool() {
		c.generate = false
	}
	if p := gjson.GetBytes(frame, "previous_response_id"); p.Type == gjson.String {
		c.prev = p.Str
	}
	switch in := gjson.GetBytes(frame, "input"); {
	case in.Type == gjson.String:
		c.input = [][]byte{userMessage(in.Str)}
	case in.IsArray():
		for _, it := range in.Array() {
			c.input = append(c.input, []byte(it.Raw))
		}
	case in.Exists() && in.Type != gjson.Null:
		return create{}, &turnError{status: 400, code: "invalid_input", message: "input must be a string or an array of items"}
	}
	body := frame
	for _, k := range []string{"type", "generate", "previous_response_id", "input"} {
		if gjson.GetBytes(body, k).Exists() {
			body, _ = sjson.DeleteBytes(body, k)
		}
	}
	body, _ = sjson.SetBytes(body, "stream", true)
	c.body = body
	return c, nil
}

// userMessage is the item a string input stands for.
func userMessage(text string) []byte {
	b := []byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":`)
	b = protocol.AppendJSONString(b, text)
	return append(b, `}]}`...)
}

// withInput sets the body's input to items.
func withInput(body []byte, items [][]byte) []byte {
	arr := append([]byte{'['}, bytes.Join(items, []byte{','})...)
	arr = append(arr, ']')
	out, err := sjson.SetRawBytes(body, "input", arr)
	if err != nil {
		return body
	}
	return out
}

// errorFrame renders the Responses WebSocket error event.
func errorFrame(status int, typ, code, msg string, param gjson.Result) []byte {
	b := []byte(`{"type":"error","status":`)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"error":{"type":`...)
	b = strconv.AppendQuote(b, typ)
	b = append(b, `,"code":`...)
	if code == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, code)
	}
	b = append(b, `,"message":`...)
	b = protocol.AppendJSONString(b, msg)
	b = append(b, `,"param":`...)
	if param.Exists() && param.Type != gjson.Null {
		b = append(b, param.Raw...)
	} else {
		b = append(b, "null"...)
	}
	return append(b, `}}`...)
}

// ownError renders an error ccload raises itself.
func ownError(e *turnError) []byte {
	typ := "invalid_request_error"
	switch {
	case e.status == 429:
		typ = "rate_limit_error"
	case e.status >= 500:
		typ = "server_error"
	}
	param := gjson.Result{}
	if e.param != "" {
		param = gjson.Parse(strconv.Quote(e.param))
	}
	return errorFrame(e.status, typ, e.code, e.message, param)
}

// errorFromBody turns the HTTP error answer of a turn (the Responses error
// object {"error":{message,type,param,code}}) into the error event.
func errorFromBody(status int, body []byte) []byte {
	e := gjson.GetBytes(body, "error")
	if !e.IsObject() {
		msg := string(body)
		if len(msg) > 512 {
			msg = msg[:512]
		}
		return errorFrame(status, "server_error", "", msg, gjson.Result{})
	}
	typ := e.Get("type").Str
	if typ == "" {
		typ = "server_error"
	}
	return errorFrame(status, typ, e.Get("code").Str, e.Get("message").Str, e.Get("param"))
}

// errorFromEvent turns a Responses SSE error event
// ({"type":"error","code","message","param"}) into the WebSocket one.
func errorFromEvent(status int, data []byte) []byte {
	code := gjson.GetBytes(data, "code").Str
	typ := "server_error"
	if status < 500 {
		typ = "invalid_request_error"
	}
	return errorFrame(status, typ, code, gjson.GetBytes(data, "message").Str, gjson.GetBytes(data, "param"))
}

// lifecycle renders a response event of a response with no output, as the
// warm-up answers.
func lifecycle(typ, id, model, status string, created int64, seq int) []byte {
	b := []byte(`{"type":`)
	b = strconv.AppendQuote(b, typ)
	b = append(b, `,"sequence_number":`...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"response":{"id":`...)
	b = strconv.AppendQuote(b, id)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"status":`...)
	b = strconv.AppendQuote(b, status)
	b = append(b, `,"model":`...)
	b = protocol.AppendJSONString(b, model)
	b = append(b, `,"output":[]`...)
	if status == "completed" {
		b = append(b, `,"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}`...)
	}
	return append(b, `}}`...)
}
