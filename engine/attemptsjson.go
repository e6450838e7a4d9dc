package engine

import (
	"strconv"

	"github.com/ccload/ccload/protocol"
)

// appendAttemptsJSON encodes the attempts column: the same JSON
// encoding/json gives the attemptLog fields (names, order, omitempty),
// written straight into one buffer. json.Marshal reflected over every
// field of every attempt on each request (perf).
func appendAttemptsJSON(b []byte, attempts []*attemptLog) []byte {
	b = append(b, '[')
	for i, a := range attempts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"channel":`...)
		b = protocol.AppendJSONString(b, a.Channel)
		b = append(b, `,"key":`...)
		b = protocol.AppendJSONString(b, a.KeyFP)
		b = append(b, `,"url":`...)
		b = protocol.AppendJSONString(b, a.URL)
		b = append(b, `,"protocol":`...)
		b = protocol.AppendJSONString(b, string(a.Protocol))
		b = append(b, `,"upstream_model":`...)
		b = protocol.AppendJSONString(b, a.UpstreamModel)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(a.Status), 10)
		if a.Kind != "" {
			b = append(b, `,"kind":`...)
			b = protocol.AppendJSONString(b, string(a.Kind))
		}
		if a.Scope != "" {
			b = append(b, `,"scope":`...)
			b = protocol.AppendJSONString(b, string(a.Scope))
		}
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendInt(b, a.DurationMs, 10)
		if a.Error != "" {
			b = append(b, `,"error":`...)
			b = protocol.AppendJSONString(b, a.Error)
		}
		if len(a.Notes) > 0 {
			b = append(b, `,"notes":[`...)
			for j, n := range a.Notes {
				if j > 0 {
					b = append(b, ',')
				}
				b = protocol.AppendJSONString(b, n)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}
