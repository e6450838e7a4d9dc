package engine

import (
	"encoding/json"
	"time"

	"github.com/valyala/fasthttp"
)

// healthBody is GET /health (design §4). Status stays "ok" (HTTP 200)
// while an old config serves after a failed reload; the error is shown.
type healthBody struct {
	Status  string        `json:"status"`
	Uptime  string        `json:"uptime"`
	Config  healthConfig  `json:"config"`
	Storage healthStorage `json:"storage"`
	Proxy   healthProxy   `json:"proxy"`
}

type healthConfig struct {
	File     string    `json:"file"`
	LoadedAt time.Time `json:"loaded_at"`
	Error    *string   `json:"error"`
	Reloads  int       `json:"reloads"`
	Failures int       `json:"failures"`
}

type healthStorage struct {
	Driver      string `json:"driver"`
	Queued      int64  `json:"queued"`
	Written     int64  `json:"written"`
	Dropped     int64  `json:"dropped"`
	WriteErrors int64  `json:"write_errors"`
	LastError   string `json:"last_error,omitempty"`
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
	if e.logs != nil {
		ws := e.logs.Stats()
		h.Storage.Queued, h.Storage.Written, h.Storage.Dropped = ws.Queued, ws.Written, ws.Dropped
		h.Storage.WriteErrors, h.Storage.LastError = ws.WriteErrors, ws.LastError
	} else {
		h.Storage.Dropped = e.noLogs.Load()
	}
	b, _ := json.Marshal(h)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
