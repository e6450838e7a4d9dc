package account

import (
	"bytes"
	"errors"
	"io"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ccload/ccload/protocol"
)

// The Codex backend only streams: a request without stream: true is
// answered 400 {"detail":"Stream must be set to true"} (the Codex CLI
// always streams, codex-rs/core/src/client_common.rs ResponsesApiRequest,
// and gateways in front of the backend report that answer). So every
// request goes up with stream: true, and a client that asked for one
// whole answer gets the stream assembled into it (CodexWhole).

// errNoCompletion is a stream that ended before its response was done.
var errNoCompletion = errors.New("codex backend: the stream ended before response.completed")

// CodexWhole reads a Responses event stream from the Codex backend and
// gives the whole response it streamed, as a non-stream Responses request
// would have been answered: the response of response.completed (or
// response.incomplete), with its output taken from the
// response.output_item.done events when the final event lists none (the
// items are authoritative; the backend stores nothing and may leave the
// final output empty). A response.failed or error event becomes a body
// holding that error, which the caller classifies as any error in a 2xx
// answer. The returned body reads the stream on its first Read, so the
// attempt's timers and body limits apply as for any answer.
func CodexWhole(stream io.ReadCloser) io.ReadCloser {
	return &wholeBody{src: stream}
}

type wholeBody struct {
	src  io.ReadCloser
	out  *bytes.Reader
	done bool
	err  error
}

func (w *wholeBody) Read(p []byte) (int, error) {
	if !w.done {
		w.done = true
		b, err := assembleCodex(w.src)
		w.out, w.err = bytes.NewReader(b), err
	}
	if w.err != nil {
		return 0, w.err
	}
	return w.out.Read(p)
}

func (w *wholeBody) Close() error { return w.src.Close() }

// assembleCodex is CodexWhole's reading.
func assembleCodex(r io.Reader) ([]byte, error) {
	sr := protocol.NewReader(r, 0)
	var items [][]byte
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return nil, errNoCompletion
		}
		if err != nil {
			return nil, err
		}
		if ev.IsDone() || len(ev.Data) == 0 {
			continue
		}
		data := gjson.ParseBytes(ev.Data)
		switch data.Get("type").Str {
		case "response.output_item.done":
			items = append(items, []byte(data.Get("item").Raw))
		case "response.completed", "response.incomplete":
			return wholeResponse([]byte(data.Get("response").Raw), items)
		case "response.failed":
			return []byte(data.Get("response").Raw), nil
		case "error":
			return append([]byte(nil), ev.Data...), nil
		}
	}
}

// wholeResponse is the final response with the streamed items as its
// output when it lists none.
func wholeResponse(resp []byte, items [][]byte) ([]byte, error) {
	if len(gjson.GetBytes(resp, "output").Array()) > 0 || len(items) == 0 {
		return resp, nil
	}
	arr := append([]byte{'['}, bytes.Join(items, []byte{','})...)
	return sjson.SetRawBytes(resp, "output", append(arr, ']'))
}
