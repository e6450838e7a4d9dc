package engine

import (
	"encoding/json"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/cluster/feed"
	"github.com/ccload/ccload/config"
)

// healthBody is GET /health (design §4). Status stays "ok" (HTTP 200)
// while an old config serves after a failed reload, and while the database
// is down (the proxy serves from memory); the error is shown.
type healthBody struct {
	Status  string        `json:"status"`
	Uptime  string        `json:"uptime"`
	Config  healthConfig  `json:"config"`
	Storage healthStorage `json:"storage"`
	Proxy   healthProxy   `json:"proxy"`
}

type healthConfig struct {
	File     string    `json:"file,omitempty"`
	LoadedAt time.Time `json:"loaded_at"`
	Error    *string   `json:"error"`
	Reloads  int       `json:"reloads"`
	Failures int       `json:"failures"`
}

// healthStorage is the log writer's state. Status is "degraded" from the
// first failed write until a write succeeds again (Since says when it
// began); meanwhile rows wait in memory, up to Capacity, and the rest are
// dropped and counted.
type healthStorage struct {
	Driver      string           `json:"driver"`
	Status      string           `json:"status"` // "ok" or "degraded"
	Since       *time.Time       `json:"since,omitempty"`
	Capacity    int64            `json:"capacity"`
	Queued      int64            `json:"queued"`
	Written     int64            `json:"written"`
	Dropped     int64            `json:"dropped"`
	Rejected    int64            `json:"rejected"`
	WriteErrors int64            `json:"write_errors"`
	LastError   string           `json:"last_error,omitempty"`
	Retention   *healthRetention `json:"retention,omitempty"`
	// Shared is the change feed's state with storage.shared (cluster/feed).
	Shared *feed.Stats `json:"shared,omitempty"`
}

// healthRetention is the log_retention pruner's last run.
type healthRetention struct {
	Keep        string     `json:"keep"` // as in the config; "0s": kept forever
	LastRun     *time.Time `json:"last_run"`
	LastDeleted int64      `json:"last_deleted"`
	Deleted     int64      `json:"deleted"`
	LastError   string     `json:"last_error,omitempty"`
}

type healthProxy struct {
	InFlight     int64 `json:"in_flight"`
	Unauthorized int64 `json:"unauthorized"`
}

func (e *Engine) serveHealth(ctx *fasthttp.RequestCtx) {
	snap := e.cfg.Current()
	st := e.cfg.Status()
	h := healthBody{
		Status: "ok",
		Uptime: e.clock.Now().Sub(e.started).Round(time.Second).String(),
		Config: healthConfig{File: st.File, LoadedAt: snap.LoadedAt, Reloads: st.Reloads, Failures: st.Failures},
		Proxy:  healthProxy{InFlight: e.inflight.Load(), Unauthorized: e.unauthorized.Load()},
	}
	if st.Error != "" {
		h.Config.Error = &st.Error
	}
	h.Storage.Driver = snap.Storage.Driver
	h.Storage.Status = "ok"
	if f, ok := e.shared.(interface{ Stats() feed.Stats }); ok {
		fs := f.Stats()
		h.Storage.Shared = &fs
	}
	if e.logs != nil {
		ws := e.logs.Stats()
		h.Storage.Capacity, h.Storage.Queued, h.Storage.Written = ws.Capacity, ws.Queued, ws.Written
		h.Storage.Dropped, h.Storage.Rejected = ws.Dropped, ws.Rejected
		h.Storage.WriteErrors, h.Storage.LastError = ws.WriteErrors, ws.LastError
		if ws.Degraded() {
			h.Storage.Status, h.Storage.Since = "degraded", &ws.FailingSince
		}
	} else {
		h.Storage.Dropped = e.noLogs.Load()
	}
	if e.retention != nil {
		rs := e.retention.Stats()
		r := &healthRetention{Keep: config.Duration(rs.Keep).String(), LastDeleted: rs.LastDeleted, Deleted: rs.Deleted, LastError: rs.LastError}
		if !rs.LastRun.IsZero() {
			r.LastRun = &rs.LastRun
		}
		h.Storage.Retention = r
	}
	if e.observer == nil || !e.observer(ctx) {
		h.withoutDetails()
	}
	b, _ := json.Marshal(h)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// withoutDetails leaves what anyone may see: statuses and counts. Paths and
// error texts (the config file's location, a failed reload's message, a
// database error naming its host) need credentials (SetObserver).
func (h *healthBody) withoutDetails() {
	h.Config.File = ""
	if h.Config.Error != nil {
		msg := "the last config reload failed; the error is shown with credentials"
		h.Config.Error = &msg
	}
	h.Storage.LastError = ""
	if h.Storage.Retention != nil {
		h.Storage.Retention.LastError = ""
	}
	h.Storage.Shared = nil
}

// SetObserver sets who may see the details of /health (admin.MayObserve:
// the metrics token or admin credentials). Unset, nobody does.
func (e *Engine) SetObserver(may func(*fasthttp.RequestCtx) bool) { e.observer = may }
