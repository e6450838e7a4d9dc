package engine

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/ccload/ccload/engine/affinity"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/store"
)

// Shared runtime state (storage.shared; docs/scale-out.md
// "Shared state"). Cooldowns and session pins made here are published on
// the change feed (cluster/feed); those of other instances arrive through
// ApplyChange. The request path never waits on any of it: it reads and
// writes memory, and the feed moves changes in the background.

// Publisher takes a change for the other instances without blocking; write,
// when not nil, is its durable side, retried until it succeeds.
type Publisher interface {
	Publish(kind, item, value string, write func(context.Context) error)
}

// ShareState makes the engine publish its session pins on p. Call it
// before serving.
func (e *Engine) ShareState(p Publisher) { e.shared = p }

// sharedCooldown is a cooldown entry as the feed carries it.
type sharedCooldown struct {
	UntilMs   int64  `json:"until_ms"`
	Strikes   int    `json:"strikes"`
	Kind      string `json:"kind"`
	Reason    string `json:"reason"`
	Hinted    bool   `json:"hinted,omitempty"`
	Confirmed bool   `json:"confirmed,omitempty"`
}

// SharedPersister returns the cooldown persister of storage.shared: every
// change is published on p, with its write to the cooldowns table (for
// restarts) as the durable side. Unlike StorePersister, a change made
// while the database is down is not dropped: it waits in p and is written
// when the database returns, replaced by any later change of the same key.
func SharedPersister(st store.Store, p Publisher) cooldown.Persister {
	return sharedPersister{base: storePersister{st}, pub: p}
}

type sharedPersister struct {
	base storePersister
	pub  Publisher
}

func (p sharedPersister) Save(e cooldown.Entry) error {
	v, err := json.Marshal(sharedCooldown{UntilMs: e.Until.UnixMilli(), Strikes: e.Strikes, Kind: string(e.Kind),
		Reason: e.Reason, Hinted: e.Hinted, Confirmed: e.Confirmed()})
	if err != nil {
		return err
	}
	p.pub.Publish(store.ChangeCooldown, cooldownItem(e.Key), string(v), func(ctx context.Context) error {
		return p.base.st.UpsertCooldown(ctx, store.Cooldown{
			CooldownKey: toStoreKey(e.Key), Until: e.Until, Strikes: e.Strikes, Kind: string(e.Kind), Reason: e.Reason,
		})
	})
	return nil
}

func (p sharedPersister) Delete(k cooldown.Key) error {
	p.pub.Publish(store.ChangeCooldown, cooldownItem(k), "", func(ctx context.Context) error {
		return p.base.st.DeleteCooldown(ctx, toStoreKey(k))
	})
	return nil
}

// cooldownItem is a cooldown key as the feed names it.
func cooldownItem(k cooldown.Key) string {
	b, _ := json.Marshal(toStoreKey(k.Normalize())) // strings only: cannot fail
	return string(b)
}

// sharedPin is a session pin as the feed carries it: identities only, no
// key and no URL credentials.
type sharedPin struct {
	Channel string `json:"channel"`
	Key     string `json:"key"`
	URL     string `json:"url"`
}

// sharePin publishes a pin that Pin asked to share.
func (e *Engine) sharePin(k affinity.SessionKey, rt affinity.Route) {
	if e.shared == nil {
		return
	}
	v, _ := json.Marshal(sharedPin(rt)) // strings only: cannot fail
	e.shared.Publish(store.ChangePin, hex.EncodeToString(k[:]), string(v), nil)
}

// ApplyChange applies another instance's cooldown or pin change from the
// feed, without publishing it again. Changes of other kinds are ignored
// (the caller handles pauses). A malformed change is reported and skipped.
func (e *Engine) ApplyChange(c store.Change) {
	var err error
	switch c.Kind {
	case store.ChangeCooldown:
		err = e.applyCooldown(c.Item, c.Value)
	case store.ChangePin:
		err = e.applyPin(c.Item, c.Value)
	default:
		return
	}
	if err != nil {
		e.log.Warn("shared state: skipped a malformed change", "kind", c.Kind, "version", c.Version, "err", err)
	}
}

func (e *Engine) applyCooldown(item, value string) error {
	var sk store.CooldownKey
	if err := json.Unmarshal([]byte(item), &sk); err != nil {
		return err
	}
	k := cooldown.Key{Scope: failure.Scope(sk.Scope), Channel: sk.Channel, KeyFP: sk.KeyFP, Model: sk.Model, URL: sk.URL}
	if value == "" {
		e.reg.cooldowns.Forget(k)
		return nil
	}
	var sc sharedCooldown
	if err := json.Unmarshal([]byte(value), &sc); err != nil {
		return err
	}
	e.reg.cooldowns.Apply(cooldown.Entry{Key: k, Until: time.UnixMilli(sc.UntilMs), Strikes: sc.Strikes,
		Kind: failure.Kind(sc.Kind), Reason: sc.Reason, Hinted: sc.Hinted}, sc.Confirmed)
	return nil
}

func (e *Engine) applyPin(item, value string) error {
	var k affinity.SessionKey
	if n, err := hex.Decode(k[:], []byte(item)); err != nil || n != len(k) {
		return errMalformedPin
	}
	var sp sharedPin
	if err := json.Unmarshal([]byte(value), &sp); err != nil {
		return err
	}
	e.reg.pins.Put(k, affinity.Route(sp), e.clock.Now())
	return nil
}

var errMalformedPin = errors.New("shared pin: item is not a 16-byte hex key")
