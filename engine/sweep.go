package engine

import (
	"strings"
	"sync"

	"ccload/config"
)

// Runtime state is keyed by identity (channel and token names, URL strings,
// key values) so that it survives a reload that keeps the entity (STYLE
// practice 7); sweepRuntime drops what belongs to entities the new snapshot
// no longer has, so nothing is kept for removed channels, URLs, keys or
// tokens. Sweep calls it after every swap. In-flight requests that still
// hold a dropped entry (a load slot) finish on it unharmed: they hold the
// pointer, the maps only stop handing it out.
func (e *Engine) sweepRuntime(snap *config.Snapshot) {
	channels := map[string]*config.Channel{}
	urls, keys := map[string]bool{}, map[string]bool{}
	for _, ch := range snap.Channels {
		channels[ch.Name] = ch
		for _, u := range ch.URLs {
			urls[ch.Name+"\x00"+u.URL] = true
		}
		for _, k := range ch.Keys {
			keys[k.Reveal()] = true
		}
	}
	tokens := map[string]bool{}
	for _, t := range snap.Tokens {
		tokens[t.Name] = true
	}
	hasChannel := func(k any) bool { return channels[k.(string)] != nil }

	sweepMap(&e.state.keys, hasChannel)
	sweepMap(&e.state.urls, func(k any) bool { return urls[k.(string)] })
	sweepMap(&e.state.keyIDs, func(k any) bool { return keys[k.(string)] })
	sweepMap(&e.channelLoad.m, hasChannel)
	sweepMap(&e.health.m, hasChannel)
	sweepMap(&e.paused, hasChannel)
	sweepMap(&e.lastChecks, hasChannel)
	sweepMap(&e.tokenLoad.m, func(k any) bool { return tokens[k.(string)] })
	e.ws.store().DropTokens(func(name string) bool { return tokens[name] })

	e.state.mu.Lock()
	for set := range e.state.wrr {
		for name := range strings.SplitSeq(set, "\x00") {
			if channels[name] == nil {
				delete(e.state.wrr, set)
				break
			}
		}
	}
	e.state.mu.Unlock()

	e.ledger.mu.Lock()
	for name := range e.ledger.tokens {
		if !tokens[name] {
			delete(e.ledger.tokens, name)
		}
	}
	for k := range e.ledger.channels {
		if name, _, _ := strings.Cut(k, "\x00"); channels[name] == nil {
			delete(e.ledger.channels, k)
		}
	}
	e.ledger.mu.Unlock()
}

func sweepMap(m *sync.Map, keep func(key any) bool) {
	m.Range(func(k, _ any) bool {
		if !keep(k) {
			m.Delete(k)
		}
		return true
	})
}
