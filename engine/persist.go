package engine

import (
	"context"
	"time"

	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/store"
)

// StorePersister saves cooldowns in the database so a restart or a second
// instance sees them (design §6). The in-memory registry stays the fast path.
func StorePersister(st store.Store) cooldown.Persister { return storePersister{st} }

type storePersister struct{ st store.Store }

func (p storePersister) Save(e cooldown.Entry) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.st.UpsertCooldown(ctx, store.Cooldown{
		CooldownKey: toStoreKey(e.Key), Until: e.Until, Strikes: e.Strikes, Kind: string(e.Kind), Reason: e.Reason,
	})
}

func (p storePersister) Delete(k cooldown.Key) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.st.DeleteCooldown(ctx, toStoreKey(k))
}

// LoadCooldowns warms a registry with the cooldowns still running in the
// database.
func LoadCooldowns(ctx context.Context, st store.Store, reg *cooldown.Registry, now time.Time) error {
	saved, err := st.ListCooldowns(ctx, now)
	if err != nil {
		return err
	}
	entries := make([]cooldown.Entry, 0, len(saved))
	for _, c := range saved {
		entries = append(entries, cooldown.Entry{
			Key:   cooldown.Key{Scope: failure.Scope(c.Scope), Channel: c.Channel, KeyFP: c.KeyFP, Model: c.Model, URL: c.URL},
			Until: c.Until, Strikes: c.Strikes, Kind: failure.Kind(c.Kind), Reason: c.Reason,
		})
	}
	reg.Load(entries)
	return nil
}

func toStoreKey(k cooldown.Key) store.CooldownKey {
	return store.CooldownKey{Scope: string(k.Scope), Channel: k.Channel, KeyFP: k.KeyFP, Model: k.Model, URL: k.URL}
}
