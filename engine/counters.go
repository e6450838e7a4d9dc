package engine

// Unauthorized is the number of proxy requests refused for a missing or
// invalid client token since start. Design §5.7: they get no log row, so
// /metrics counts them from here.
func (e *Engine) Unauthorized() int64 { return e.unauthorized.Load() }
