package store

import (
	"strconv"

	"github.com/ccload/ccload/protocol"
)

// Most requests are answered by their first attempt, and then the
// attempts column repeats the row: the channel, key, URL, protocol, model,
// status and duration it already holds. That copy was half of such a
// row's bytes (160 of ~320 in the load benchmark): 100,000 such rows took
// 40.7 MB of SQLite without it stored and 24.3 MB with it left out, and
// each byte is bound, written to the WAL and checkpointed. So the column
// stays empty when the row's attempts are exactly the one attempt its own
// columns describe, and is read back as that attempt. Anything else (more
// attempts, notes, an error, a status or duration of its own) is stored as
// given: the test is byte equality, so a change of the engine's format
// costs only the saving (engine.TestOneAttemptRowKeepsNoCopyOfItsAttempt
// catches that).

// storedAttempts is what the attempts_json column keeps for the cleaned
// row r.
func storedAttempts(r *LogRow) string {
	if r.Attempts != 1 || r.AttemptsJSON == "" || len(r.AttemptsJSON) > 1024 {
		return r.AttemptsJSON
	}
	var buf [1024]byte
	if string(appendImpliedAttempts(buf[:0], r)) == r.AttemptsJSON {
		return ""
	}
	return r.AttemptsJSON
}

// readAttempts restores a column storedAttempts left empty.
func readAttempts(r *LogRow) {
	if r.Attempts == 1 && r.AttemptsJSON == "" {
		r.AttemptsJSON = string(appendImpliedAttempts(nil, r))
	}
}

// appendImpliedAttempts appends the one-attempt array the row's columns
// describe, as the engine writes it (engine/record.go).
func appendImpliedAttempts(b []byte, r *LogRow) []byte {
	b = append(b, `[{"channel":`...)
	b = protocol.AppendJSONString(b, r.Channel)
	b = append(b, `,"key":`...)
	b = protocol.AppendJSONString(b, r.KeyFP)
	b = append(b, `,"url":`...)
	b = protocol.AppendJSONString(b, r.URL)
	b = append(b, `,"protocol":`...)
	b = protocol.AppendJSONString(b, r.UpstreamProtocol)
	b = append(b, `,"upstream_model":`...)
	b = protocol.AppendJSONString(b, r.UpstreamModel)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	if r.FailureKind != "" {
		b = append(b, `,"kind":`...)
		b = protocol.AppendJSONString(b, r.FailureKind)
	}
	if r.FailureScope != "" {
		b = append(b, `,"scope":`...)
		b = protocol.AppendJSONString(b, r.FailureScope)
	}
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendInt(b, r.DurationMs, 10)
	return append(b, `}]`...)
}
