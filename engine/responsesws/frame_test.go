package responsesws

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestParseCreate(t *testing.T) {
	c, te := parseCreate([]byte(`{"type":"response.create","model":"m","generate":false,"previous_response_id":"resp_1","store":false,"input":"hi"}`))
	if te != nil {
		t.Fatal(te.message)
	}
	if c.generate || c.prev != "resp_1" || c.model != "m" || len(c.input) != 1 {
		t.Fatalf("%+v", c)
	}
	if got, want := string(c.body), `{"model":"m","store":false,"stream":true}`; got != want {
		t.Errorf("body %s, want %s", got, want)
	}
	item := `{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`
	if got := string(c.input[0]); got != item {
		t.Errorf("input %s, want %s", got, item)
	}
	if got, want := string(withInput(c.body, c.input)), `{"model":"m","store":false,"stream":true,"input":[`+item+`]}`; got != want {
		t.Errorf("withInput %s, want %s", got, want)
	}
	for _, bad := range []string{`[1]`, `{"type":"response.cancel"}`, `{"type":"response.create","input":3}`} {
		if _, te := parseCreate([]byte(bad)); te == nil || te.status != 400 {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestErrorFrames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{string(ownError(notFound("resp_gone"))),
			`{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"previous_response_not_found","message":"Previous response with id 'resp_gone' not found.","param":"previous_response_id"}}`},
		{string(ownError(&turnError{status: 400, code: "context_too_large", message: "big"})),
			`{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"context_too_large","message":"big","param":null}}`},
		{string(errorFromBody(429, []byte(`{"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`))),
			`{"type":"error","status":429,"error":{"type":"rate_limit_error","code":"rate_limit_exceeded","message":"slow down","param":null}}`},
		{string(errorFromEvent(502, []byte(`{"type":"error","code":"server_error","message":"broke","param":null}`))),
			`{"type":"error","status":502,"error":{"type":"server_error","code":"server_error","message":"broke","param":null}}`},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
		if !gjson.Valid(tc.got) {
			t.Errorf("invalid JSON %s", tc.got)
		}
	}
}
