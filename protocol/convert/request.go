package convert

import (
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/request"
)

// Requests are converted by package request; these names keep the one
// import the engine converts with for every direction (the engine's own
// type request would shadow that package's name).

// ErrUnrepresentable is request.ErrUnrepresentable.
var ErrUnrepresentable = request.ErrUnrepresentable

// RequestOptions are request.Options.
type RequestOptions = request.Options

// Request is request.Convert.
func Request(from, to protocol.Family, body []byte, model string, stream bool) ([]byte, error) {
	return request.Convert(from, to, body, model, stream)
}

// RequestWith is request.ConvertWith.
func RequestWith(from, to protocol.Family, body []byte, model string, stream bool, opt RequestOptions) ([]byte, []string, error) {
	return request.ConvertWith(from, to, body, model, stream, opt)
}
