package mockupstream

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/fasthttp/websocket"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// serveSocket is the Codex backend's Responses WebSocket mode: each
// response.create frame is checked and answered as the same body POSTed
// with stream: true would be (the dialect, the account's quota), its SSE
// events sent one per text frame; an error answer becomes
// {"type":"error","status":N,"error":{...}}.
//
// The backend stores nothing (store: false), but a socket remembers its
// last response, so a frame may continue it with previous_response_id and
// only the new input items. The inner mock, which plays the model, is
// handed what the model would see: that response's input and output
// followed by the new items. Any other previous_response_id gets the 400
// previous_response_not_found error event.
func (b *CodexBackend) serveSocket(w http.ResponseWriter, r *http.Request) {
	conn, err := wsUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	h := r.Header.Clone()
	for _, k := range []string{"Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions"} {
		h.Del(k)
	}
	h.Set(TransportHeader, "websocket")
	var last string         // the id of the last response completed on this socket
	var transcript []string // its input and output items, raw JSON
	for {
		_, frame, err := conn.ReadMessage()
		if err != nil {
			return
		}
		body, _ := sjson.DeleteBytes(frame, "type")
		input := rawItems(gjson.GetBytes(body, "input"))
		if prev := gjson.GetBytes(body, "previous_response_id").Str; prev != "" {
			if prev != last {
				conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"previous_response_not_found","message":"Previous response with id '`+prev+`' not found.","param":"previous_response_id"}}`))
				continue
			}
			input = append(append([]string{}, transcript...), input...)
			body, _ = sjson.DeleteBytes(body, "previous_response_id")
			body, _ = sjson.SetRawBytes(body, "input", []byte("["+strings.Join(input, ",")+"]"))
		}
		body, _ = sjson.SetBytes(body, "stream", true)
		req := httptest.NewRequest(http.MethodPost, r.URL.Path, bytes.NewReader(body))
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, req)
		if rec.Code >= 400 {
			e := gjson.GetBytes(rec.Body.Bytes(), "error").Raw
			if e == "" {
				e = `{"type":"invalid_request_error","message":` + strconv.Quote(rec.Body.String()) + `}`
			}
			conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"error","status":`+strconv.Itoa(rec.Code)+`,"error":`+e+`}`))
			continue
		}
		var output []string
		for _, block := range strings.Split(rec.Body.String(), "\n\n") {
			for _, line := range strings.Split(block, "\n") {
				d, ok := strings.CutPrefix(line, "data: ")
				if !ok || d == "[DONE]" {
					continue
				}
				switch gjson.Get(d, "type").Str {
				case "response.output_item.done":
					output = append(output, gjson.Get(d, "item").Raw)
				case "response.completed":
					last, transcript = gjson.Get(d, "response.id").Str, append(input, output...)
				}
				if conn.WriteMessage(websocket.TextMessage, []byte(d)) != nil {
					return
				}
			}
		}
	}
}

// rawItems is an input's items as raw JSON; a string input is one user
// message.
func rawItems(in gjson.Result) []string {
	if in.Type == gjson.String {
		return []string{`{"type":"message","role":"user","content":[{"type":"input_text","text":` + strconv.Quote(in.Str) + `}]}`}
	}
	var out []string
	for _, it := range in.Array() {
		out = append(out, it.Raw)
	}
	return out
}
