package admin

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/store"
)

// logsQuery is GET /admin/logs: request logs, newest first, filtered by
// since, until, channel, token, model, status (2xx or 2), scope (failure
// scope), paged with before (a row id) and limit.
func (s *Server) logsQuery(ctx *fasthttp.RequestCtx) error {
	args := ctx.QueryArgs()
	now := s.clock.Now()
	q := store.LogQuery{
		Channel:      string(args.Peek("channel")),
		Token:        string(args.Peek("token")),
		Model:        string(args.Peek("model")),
		FailureScope: string(args.Peek("scope")),
	}
	var err error
	if q.Since, err = ParseTime(string(args.Peek("since")), now); err != nil {
		return errBadRequest("since: " + err.Error())
	}
	if q.Until, err = ParseTime(string(args.Peek("until")), now); err != nil {
		return errBadRequest("until: " + err.Error())
	}
	if q.StatusClass, err = ParseStatusClass(string(args.Peek("status"))); err != nil {
		return errBadRequest("status: " + err.Error())
	}
	if q.BeforeID, err = intArg(args, "before"); err != nil {
		return err
	}
	limit, err := intArg(args, "limit")
	if err != nil {
		return err
	}
	q.Limit = int(min(limit, store.MaxLogLimit))
	if q.Limit == 0 {
		q.Limit = store.DefaultLogLimit
	}
	rows, err := s.st.QueryLogs(detach(ctx), q)
	if err != nil {
		return errInternal("querying logs failed", err)
	}
	resp := adminapi.LogsResponse{Rows: make([]adminapi.LogEntry, 0, len(rows))}
	for _, r := range rows {
		resp.Rows = append(resp.Rows, NewLogEntry(r))
	}
	if len(rows) == q.Limit {
		resp.NextBefore = rows[len(rows)-1].ID
	}
	return writeJSON(ctx, fasthttp.StatusOK, resp)
}

// logEndpoint matches GET /admin/logs/{id}.
func logEndpoint(path string) (endpoint, bool) {
	raw, ok := strings.CutPrefix(path, "/admin/logs/")
	if !ok || raw == "" {
		return endpoint{}, false
	}
	return endpoint{method: "GET", h: func(s *Server, ctx *fasthttp.RequestCtx) error {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			return errBadRequest("log id: want a positive integer, got " + quote(raw))
		}
		return s.logDetail(ctx, id)
	}}, true
}

// logDetail is GET /admin/logs/{id}: the row, its attempts and its debug
// capture.
func (s *Server) logDetail(ctx *fasthttp.RequestCtx, id int64) error {
	r, err := s.st.GetLog(detach(ctx), id)
	if errors.Is(err, store.ErrLogNotFound) {
		return errNotFound("no request log " + strconv.FormatInt(id, 10) + " (never written, or pruned by storage.log_retention)")
	}
	if err != nil {
		return errInternal("reading the log failed", err)
	}
	return writeJSON(ctx, fasthttp.StatusOK, NewLogDetail(r))
}

// NewLogDetail is the API form of a row read with its capture. `ccload
// logs show --db` uses it too.
func NewLogDetail(r store.LogRow) adminapi.LogDetail {
	d := adminapi.LogDetail{LogEntry: NewLogEntry(r)}
	if r.Debug == "" {
		return d
	}
	var dbg adminapi.Debug
	if json.Unmarshal([]byte(r.Debug), &dbg) != nil {
		return d // written by another version: shown as not captured
	}
	for i := range dbg.Exchanges {
		dbg.Exchanges[i].Request.URL = maskURL(dbg.Exchanges[i].Request.URL)
	}
	d.Debug = &dbg
	return d
}

func intArg(args *fasthttp.Args, name string) (int64, error) {
	v := string(args.Peek(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errBadRequest(name + ": want a non-negative integer, got " + quote(v))
	}
	return n, nil
}

// ParseTime reads a time filter: "" (none), a duration back from now
// ("90s", "1h", "7d"), an RFC 3339 time or a date (midnight UTC).
func ParseTime(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := config.ParseDuration(v); err == nil {
		return now.Add(-d.D()), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, &httpError{Status: fasthttp.StatusBadRequest,
		Msg: `want a duration back from now ("1h", "7d"), an RFC 3339 time or a date, got ` + quote(v)}
}

// ParseStatusClass reads "2xx" or "2" (1–5); "" is 0, every status.
func ParseStatusClass(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	d := strings.TrimSuffix(strings.ToLower(v), "xx")
	if len(d) == 1 && d[0] >= '1' && d[0] <= '5' {
		return int(d[0] - '0'), nil
	}
	return 0, &httpError{Status: fasthttp.StatusBadRequest, Msg: `want 1xx, 2xx, 3xx, 4xx or 5xx, got ` + quote(v)}
}

// NewLogEntry is the API form of a stored row: URLs masked, the attempts
// parsed. `ccload logs --db` uses it to print rows read from the database.
func NewLogEntry(r store.LogRow) adminapi.LogEntry {
	e := adminapi.LogEntry{
		ID: r.ID, Time: r.Time, RequestID: r.RequestID, Token: r.Token, Channel: r.Channel,
		Key: r.KeyFP, URL: maskURL(r.URL), ClientProtocol: r.ClientProtocol, UpstreamProtocol: r.UpstreamProtocol,
		Model: r.Model, UpstreamModel: r.UpstreamModel, Status: r.Status,
		FailureKind: r.FailureKind, FailureScope: r.FailureScope, Attempts: r.Attempts,
		AttemptLog: []adminapi.AttemptLog{},
		TTFBMs:     r.TTFBMs, DurationMs: r.DurationMs,
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, ReasoningTokens: r.ReasoningTokens,
		Cost: r.Cost, Stream: r.Stream, Incomplete: r.Incomplete, Unpriced: r.Unpriced, ClientIP: r.ClientIP, Error: r.Error,
	}
	if r.AttemptsJSON != "" {
		// The engine writes the same field names; a row it cannot parse
		// (an older format) just shows no attempts.
		var as []adminapi.AttemptLog
		if json.Unmarshal([]byte(r.AttemptsJSON), &as) == nil {
			for i := range as {
				as[i].URL = maskURL(as[i].URL)
			}
			e.AttemptLog = as
		}
	}
	return e
}
