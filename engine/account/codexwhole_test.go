package account_test

import (
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/engine/account"
)

func whole(t *testing.T, stream string) (string, error) {
	t.Helper()
	b, err := io.ReadAll(account.CodexWhole(io.NopCloser(strings.NewReader(stream))))
	return string(b), err
}

// TestCodexWhole: the streamed items make the output when the final event
// lists none; a failed response or an error event is an error body; a
// stream cut before its end is an error.
func TestCodexWhole(t *testing.T) {
	item := `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi there"}]}`
	got, err := whole(t, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\"}}\n\n"+
		"data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":"+item+"}\n\n"+
		"data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r1\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":2}}}\n\n")
	if err != nil || gjson.Get(got, "output.0.content.0.text").Str != "hi there" || gjson.Get(got, "usage.output_tokens").Int() != 2 {
		t.Fatalf("assembled %s, %v", got, err)
	}
	got, err = whole(t, "data: {\"type\":\"response.failed\",\"response\":{\"id\":\"r2\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n")
	if err != nil || gjson.Get(got, "error.message").Str != "boom" {
		t.Fatalf("failed response gave %s, %v", got, err)
	}
	if got, err = whole(t, "data: {\"type\":\"response.output_item.done\",\"item\":"+item+"}\n\n"); err == nil {
		t.Fatalf("a cut stream gave %s and no error", got)
	}
}
