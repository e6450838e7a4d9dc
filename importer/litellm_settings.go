package importer

import (
	"math"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/config/yamlnode"
)

// LiteLLM's router_settings, litellm_settings and general_settings: the
// values with a ccload equivalent become routing settings, the others notes.

// aliases adds model_group_alias names as extra models of the channels
// that serve the group, sending the group's upstream name.
func (l *litellm) aliases(n *yaml.Node) {
	for _, a := range yamlnode.Pairs(n) {
		group := yamlnode.Text(a.Val)
		if group == "" {
			group = yamlnode.Text(yamlnode.Get(yamlnode.Pairs(a.Val), "model"))
		}
		found := false
		for _, ch := range l.cfg.Channels {
			m := ch.Models[0]
			if m.Name != group || hasModel(ch, a.Key) {
				continue
			}
			found = true
			ch.Models = append(ch.Models, Model{Name: a.Key, Upstream: firstOf(m.Upstream, m.Name)})
		}
		if !found {
			l.note("model_group_alias %s -> %s: no channel serves %s", a.Key, group, group)
		}
	}
}

func hasModel(ch *Channel, name string) bool {
	for _, m := range ch.Models {
		if m.Name == name {
			return true
		}
	}
	return false
}

// has reports whether a setting at path was carried over already.
func (l *litellm) has(path ...string) bool {
	for _, s := range l.cfg.Settings {
		if strings.Join(s.Path, ".") == strings.Join(path, ".") {
			return true
		}
	}
	return false
}

func (l *litellm) set(value any, comment string, path ...string) {
	l.cfg.Settings = append(l.cfg.Settings, Setting{Path: path, Value: value, Comment: comment})
}

// seconds reads a LiteLLM duration in seconds.
func seconds(n *yaml.Node) (config.Duration, bool) {
	f, ok := number(n)
	if !ok || f < 0 || f > 1e9 {
		return 0, false
	}
	return config.Duration(math.Round(f * 1e9)), true
}

// routerSettings carries the router values ccload has an equivalent for.
func (l *litellm) routerSettings(router []yamlnode.Entry) {
	for _, kv := range router {
		from := "router_settings." + kv.Key + ": " + yamlnode.Text(kv.Val)
		switch kv.Key {
		case "model_group_alias": // done by aliases
		case "num_retries":
			if n, ok := number(kv.Val); ok && n >= 0 {
				l.set(int(n)+1, from+", plus the first attempt", "routing", "max_attempts")
				continue
			}
			l.note("%s: not a number", from)
		case "timeout":
			l.timeout(kv.Val, from, "non_stream")
		case "stream_timeout":
			l.timeout(kv.Val, from+" (the wait for the first byte)", "first_byte")
		case "cooldown_time":
			d, ok := seconds(kv.Val)
			if !ok {
				l.note("%s: not a number of seconds", from)
				continue
			}
			for _, kind := range []string{"auth", "rate_limit", "server", "timeout"} {
				l.set(d.String(), from+"; doubled on repeated failures, up to max", "routing", "cooldown", kind)
			}
			if d < config.DefaultRouting.Cooldown.Min {
				l.set(d.String(), "so the cooldown above is not raised to the default min", "routing", "cooldown", "min")
			}
			if d > config.DefaultRouting.Cooldown.Max {
				l.set(d.String(), "so the cooldown above is not cut to the default max", "routing", "cooldown", "max")
			}
		case "allowed_fails":
			l.note("%s (ccload cools a key, model or URL at its first failure and backs off; there is no failure threshold)", from)
		case "routing_strategy":
			l.note("%s (ccload routes by priority, then smooth weighted round-robin by weight)", from)
		case "fallbacks", "context_window_fallbacks", "content_policy_fallbacks", "default_fallbacks":
			l.note("router_settings.%s: %s (ccload fails over between channels serving the same model; it never changes the model)",
				kv.Key, oneLine(flow(kv.Val), 60))
		default:
			l.noteSetting("router_settings", kv)
		}
	}
}

func (l *litellm) timeout(n *yaml.Node, from, field string) {
	if d, ok := seconds(n); ok {
		l.set(d.String(), from, "routing", "timeouts", field)
		return
	}
	l.note("%s: not a number of seconds", from)
}

// litellmSettings carries num_retries and request_timeout when the router
// did not set them; the rest are notes.
func (l *litellm) litellmSettings(s []yamlnode.Entry) {
	for _, kv := range s {
		from := "litellm_settings." + kv.Key + ": " + yamlnode.Text(kv.Val)
		switch {
		case kv.Key == "num_retries" && !l.has("routing", "max_attempts"):
			if n, ok := number(kv.Val); ok && n >= 0 {
				l.set(int(n)+1, from+", plus the first attempt", "routing", "max_attempts")
			}
		case kv.Key == "request_timeout" && !l.has("routing", "timeouts", "non_stream"):
			l.timeout(kv.Val, from, "non_stream")
		case kv.Key == "num_retries" || kv.Key == "request_timeout":
			l.note("%s (the router_settings value was used)", from)
		default:
			l.noteSetting("litellm_settings", kv)
		}
	}
}

// generalSettings are proxy settings (master key, database); their values
// are often secrets, so notes name them only.
func (l *litellm) generalSettings(s []yamlnode.Entry) {
	for _, kv := range s {
		switch kv.Key {
		case "master_key":
			l.note("general_settings.master_key: clients get ccload tokens instead (`ccload tokens new NAME`)")
		case "database_url":
			l.note("general_settings.database_url: ccload keeps logs and usage in its own storage: (not migrated)")
		default:
			l.note("general_settings.%s: no ccload equivalent", kv.Key)
		}
	}
}

func (l *litellm) noteSetting(section string, kv yamlnode.Entry) {
	if secretish(kv.Key) {
		l.note("%s.%s: no ccload equivalent (value not copied)", section, kv.Key)
		return
	}
	l.note("%s.%s: %s (no ccload equivalent)", section, kv.Key, oneLine(flow(kv.Val), 60))
}
