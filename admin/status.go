package admin

import (
	"slices"
	"sync"

	"github.com/valyala/fasthttp"
	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/config"
)

// status is GET /admin/status.
func (s *Server) status(ctx *fasthttp.RequestCtx) error {
	now := s.clock.Now()
	self, list, listErr := s.instances(detach(ctx))
	return writeJSON(ctx, fasthttp.StatusOK, adminapi.Status{
		Instance: self, Instances: list, InstancesError: listErr,
		Time: now, StartedAt: s.started, UptimeSeconds: int64(now.Sub(s.started).Seconds()),
		Config:        s.configStatus(),
		Storage:       s.storageStatus(),
		InFlight:      s.eng.InFlight(),
		EventsDropped: s.eng.Events().Dropped(),
		PriceCatalog:  s.priceCatalogStatus(),
		WebSockets:    s.webSocketStatus(),
	})
}

func (s *Server) configStatus() adminapi.ConfigStatus {
	st := s.cfg.Status()
	s.history.sync(st)
	snap := s.cfg.Current()
	return adminapi.ConfigStatus{
		File: st.File, SHA256: st.SHA256, LoadedAt: st.LoadedAt, LastAttempt: st.LastAttempt,
		Error: st.Error, Reloads: st.Reloads, Failures: st.Failures,
		Channels: len(snap.Channels), Tokens: len(snap.Tokens),
	}
}

func (s *Server) storageStatus() adminapi.StorageStatus {
	out := adminapi.StorageStatus{Driver: s.st.Driver()}
	if s.logs != nil {
		ws := s.logs.Stats()
		out.Queued, out.Written, out.Dropped, out.Rejected = ws.Queued, ws.Written, ws.Dropped, ws.Rejected
		out.Unwritten, out.WriteErrors, out.LastError = ws.Unwritten, ws.WriteErrors, ws.LastError
	}
	return out
}

// config is GET /admin/config: the serving config with secrets masked, as
// JSON, or as YAML with ?format=yaml (config only, no status or history).
func (s *Server) config(ctx *fasthttp.RequestCtx) error {
	view := configView(s.cfg.Current())
	switch f := string(ctx.QueryArgs().Peek("format")); f {
	case "", "json":
	case "yaml":
		b, err := yaml.Marshal(view)
		if err != nil {
			return errInternal("encoding the config failed", err)
		}
		ctx.SetContentType("application/yaml; charset=utf-8")
		ctx.SetBody(b)
		return nil
	default:
		return errBadRequest(`format: want "json" or "yaml", got "` + f + `"`)
	}
	st := s.configStatus()
	return writeJSON(ctx, fasthttp.StatusOK, adminapi.ConfigResponse{Status: st, Config: view, History: s.history.list()})
}

// reloader is implemented by *config.Source.
type reloader interface{ Reload() error }

// reload is POST /admin/config/reload, the same path as SIGHUP. A file that
// does not validate keeps the old config serving; the answer is 422 with
// the problems.
func (s *Server) reload(ctx *fasthttp.RequestCtx) error {
	r, ok := s.cfg.(reloader)
	if !ok {
		return &httpError{Status: fasthttp.StatusNotImplemented, Msg: "this config source cannot reload"}
	}
	if err := r.Reload(); err != nil {
		s.configStatus() // record the failure in the history now
		return &httpError{Status: fasthttp.StatusUnprocessableEntity, Msg: "reload failed, the previous config keeps serving: " + err.Error()}
	}
	return writeJSON(ctx, fasthttp.StatusOK, s.configStatus())
}

// maxHistory bounds the reload history kept in memory.
const maxHistory = 50

// history is the in-memory record of reloads. Swaps are recorded as they
// happen when the source offers OnSwap; failures are noticed when the
// status is read (every admin call and /metrics scrape), so several
// failures between two reads fold into one record with a Count.
type history struct {
	mu         sync.Mutex
	recs       []adminapi.ReloadRecord // oldest first
	onSwap     bool
	seenReload int
	seenFail   int
}

type swapNotifier interface {
	OnSwap(func(old, new *config.Snapshot))
}

func newHistory(cfg Config) *history {
	st := cfg.Status()
	h := &history{seenReload: st.Reloads, seenFail: st.Failures}
	h.recs = append(h.recs, adminapi.ReloadRecord{Time: st.LoadedAt, Result: "loaded", SHA256: st.SHA256})
	if n, ok := cfg.(swapNotifier); ok {
		h.onSwap = true
		n.OnSwap(func(_, snap *config.Snapshot) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.seenReload++
			h.add(adminapi.ReloadRecord{Time: snap.LoadedAt, Result: "reloaded", SHA256: snap.SHA256})
		})
	}
	return h
}

// sync records what the status shows and the history has not seen yet.
func (h *history) sync(st config.Status) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := st.Failures - h.seenFail; n > 0 {
		h.add(adminapi.ReloadRecord{Time: st.LastAttempt, Result: "failed", Error: st.Error, Count: n})
		h.seenFail = st.Failures
	}
	if n := st.Reloads - h.seenReload; n > 0 && !h.onSwap {
		h.add(adminapi.ReloadRecord{Time: st.LoadedAt, Result: "reloaded", SHA256: st.SHA256, Count: n})
		h.seenReload = st.Reloads
	}
}

// add appends r in time order. Called with mu held.
func (h *history) add(r adminapi.ReloadRecord) {
	i, _ := slices.BinarySearchFunc(h.recs, r, func(a, b adminapi.ReloadRecord) int {
		if a.Time.After(b.Time) {
			return 1
		}
		return -1 // equal times keep arrival order
	})
	h.recs = slices.Insert(h.recs, i, r)
	if len(h.recs) > maxHistory {
		h.recs = slices.Delete(h.recs, 0, len(h.recs)-maxHistory)
	}
}

// list returns the records newest first.
func (h *history) list() []adminapi.ReloadRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.recs)
	slices.Reverse(out)
	return out
}
