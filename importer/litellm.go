package importer

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/config/yamlnode"
)

// provider is what ccload needs to know about a LiteLLM provider prefix.
type provider struct {
	family string // ccload protocol the upstream speaks
	base   string // default api_base, as ccload writes it
	keyEnv string // variable LiteLLM reads when api_key is not set
	// chatPath: LiteLLM appends /chat/completions to api_base (OpenAI-
	// compatible providers), where ccload appends /v1/chat/completions.
	chatPath bool
	keyless  bool   // the upstream usually takes no key (local servers)
	why      string // set when ccload cannot reach this provider: why
}

var providers = map[string]provider{
	"openai":      {family: "openai", base: "https://api.openai.com", keyEnv: "OPENAI_API_KEY", chatPath: true},
	"anthropic":   {family: "anthropic", base: "https://api.anthropic.com", keyEnv: "ANTHROPIC_API_KEY"},
	"gemini":      {family: "gemini", base: "https://generativelanguage.googleapis.com", keyEnv: "GEMINI_API_KEY"},
	"azure":       {family: "openai", keyEnv: "AZURE_API_KEY"},
	"openrouter":  {family: "openai", base: "https://openrouter.ai/api/v1", keyEnv: "OPENROUTER_API_KEY", chatPath: true},
	"groq":        {family: "openai", base: "https://api.groq.com/openai/v1", keyEnv: "GROQ_API_KEY", chatPath: true},
	"mistral":     {family: "openai", base: "https://api.mistral.ai/v1", keyEnv: "MISTRAL_API_KEY", chatPath: true},
	"xai":         {family: "openai", base: "https://api.x.ai/v1", keyEnv: "XAI_API_KEY", chatPath: true},
	"deepseek":    {family: "openai", base: "https://api.deepseek.com/v1", keyEnv: "DEEPSEEK_API_KEY", chatPath: true},
	"hosted_vllm": {family: "openai", chatPath: true, keyless: true},
	// LiteLLM talks to Ollama's own API; ccload uses its OpenAI-compatible
	// /v1/chat/completions on the same server.
	"ollama":      {family: "openai", base: "http://localhost:11434", keyless: true},
	"ollama_chat": {family: "openai", base: "http://localhost:11434", keyless: true},
	"vertex_ai": {why: "Vertex AI authenticates with Google Cloud service-account tokens, which ccload " +
		"cannot mint; serve these models with a Gemini API key (provider gemini/) instead"},
	"bedrock":                {why: "AWS Bedrock needs SigV4-signed requests, which ccload does not make"},
	"sagemaker":              {why: "AWS SageMaker needs SigV4-signed requests, which ccload does not make"},
	"text-completion-openai": {why: "text completions (/v1/completions) are not a protocol ccload serves"},
}

// litellm holds the state of one conversion.
type litellm struct {
	cfg    *Config
	names  namer
	creds  map[string][]yamlnode.Entry // credential_list: name -> credential_values
	prices map[string]int              // model -> index in cfg.Pricing
}

// ReadLiteLLM reads a LiteLLM proxy config.yaml. Each model_list entry
// becomes one channel, so a model group served by two providers becomes
// two channels serving the same model. Entries ccload cannot reach are
// written disabled with the reason; wildcard and non-chat entries are
// listed in the notes.
func ReadLiteLLM(data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var top []yamlnode.Entry
	if len(doc.Content) > 0 {
		top = yamlnode.Pairs(doc.Content[0])
	}
	list := yamlnode.Get(top, "model_list")
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, errors.New("not a LiteLLM config: no model_list")
	}
	if len(list.Content) == 0 {
		return nil, errors.New("model_list is empty")
	}
	l := &litellm{cfg: &Config{Format: FormatLiteLLM}, names: namer{}, creds: map[string][]yamlnode.Entry{}, prices: map[string]int{}}
	if cl := yamlnode.Get(top, "credential_list"); cl != nil {
		for _, c := range cl.Content {
			cp := yamlnode.Pairs(c)
			l.creds[yamlnode.Text(yamlnode.Get(cp, "credential_name"))] = yamlnode.Pairs(yamlnode.Get(cp, "credential_values"))
		}
	}
	for i, item := range list.Content {
		l.entry(i, yamlnode.Pairs(item))
	}
	router := yamlnode.Pairs(yamlnode.Get(top, "router_settings"))
	l.aliases(yamlnode.Get(router, "model_group_alias"))
	l.routerSettings(router)
	l.litellmSettings(yamlnode.Pairs(yamlnode.Get(top, "litellm_settings")))
	for _, e := range top {
		switch e.Key {
		case "model_list", "router_settings", "litellm_settings", "credential_list":
		case "general_settings":
			l.generalSettings(yamlnode.Pairs(e.Val))
		case "environment_variables":
			var names []string
			for _, v := range yamlnode.Pairs(e.Val) {
				names = append(names, v.Key)
			}
			l.note("environment_variables sets %s: export them where ccload runs (values not copied)", strings.Join(names, ", "))
		default:
			l.note("%s: no ccload equivalent", e.Key)
		}
	}
	return l.cfg, nil
}

func (l *litellm) note(format string, args ...any) {
	l.cfg.Notes = append(l.cfg.Notes, fmt.Sprintf(format, args...))
}

// modes ccload can serve; LiteLLM's others are embeddings, images, audio...
var chatModes = map[string]bool{"": true, "chat": true, "responses": true}

// entry converts one model_list item.
func (l *litellm) entry(i int, e []yamlnode.Entry) {
	name := yamlnode.Text(yamlnode.Get(e, "model_name"))
	params := yamlnode.Pairs(yamlnode.Get(e, "litellm_params"))
	info := yamlnode.Pairs(yamlnode.Get(e, "model_info"))
	model := yamlnode.Text(yamlnode.Get(params, "model"))
	switch mode := yamlnode.Text(yamlnode.Get(info, "mode")); {
	case name == "":
		l.note("model_list[%d] skipped: no model_name", i)
		return
	case strings.Contains(name, "*"):
		l.note("model_list[%d] %q skipped: ccload has no wildcard models; list each model", i, name)
		return
	case !chatModes[mode]:
		l.note("model_list[%d] %q skipped: mode %s (ccload serves chat models only)", i, name, mode)
		return
	case model == "":
		l.note("model_list[%d] %q skipped: litellm_params has no model", i, name)
		return
	}
	if cn := yamlnode.Text(yamlnode.Get(params, "litellm_credential_name")); cn != "" {
		if cred, ok := l.creds[cn]; ok {
			params = append(params, cred...) // keys in litellm_params win
		} else {
			l.note("model_list[%d] %q: credential %q is not in credential_list", i, name, cn)
		}
	}
	prov, upstream := splitProvider(model, yamlnode.Text(yamlnode.Get(params, "custom_llm_provider")))
	p, known := providers[prov]
	ch := &Channel{Name: l.names.unique(slug(name + "-" + prov)), LineComments: map[string]string{}}
	ch.Comments = append(ch.Comments, fmt.Sprintf("LiteLLM model_list[%d]: %s -> %s", i, name, model))
	var notes rowNotes
	if upstream == name {
		upstream = ""
	}
	ch.Models = []Model{{Name: name, Upstream: upstream}}

	apiBase := yamlnode.Text(yamlnode.Get(params, "api_base"))
	switch {
	case p.why != "":
		ch.Disabled = true
		notes.add("provider %s: %s", prov, p.why)
	case !known && apiBase == "":
		ch.Disabled = true
		notes.add("provider %q is unknown to the import and there is no api_base", prov)
	default:
		if !known {
			p = provider{family: "openai", chatPath: true}
			ch.Comments = append(ch.Comments, fmt.Sprintf("provider %q is taken to be OpenAI-compatible", prov))
		}
		ch.Keys = l.key(ch, p, params, &notes)
		if prov == "azure" {
			l.azure(ch, params, &notes)
		} else {
			l.url(ch, p, apiBase, &notes)
		}
	}
	if ch.Disabled {
		ch.Keys, ch.URLs = nil, nil
	}
	l.limits(ch, e, params, &notes)
	l.price(name, params, info)
	ch.Notes = notes
	l.cfg.Channels = append(l.cfg.Channels, ch)
}

// splitProvider splits "anthropic/claude-x" into provider and model. A
// model without a prefix gets the provider LiteLLM infers for it.
func splitProvider(model, custom string) (string, string) {
	if custom != "" {
		return strings.ToLower(custom), strings.TrimPrefix(model, custom+"/")
	}
	if p, m, ok := strings.Cut(model, "/"); ok {
		return strings.ToLower(p), m
	}
	switch m := strings.ToLower(model); {
	case strings.HasPrefix(m, "claude"):
		return "anthropic", model
	case strings.HasPrefix(m, "gemini"):
		return "vertex_ai", model // LiteLLM's default for bare gemini-* names
	default:
		return "openai", model
	}
}

// litellmValue converts a LiteLLM string; "os.environ/VAR" is ${VAR}.
func litellmValue(s string, secret bool) Value {
	if v, ok := strings.CutPrefix(s, "os.environ/"); ok && validVar(v) {
		return Env(v)
	}
	if secret {
		return SecretValue(s)
	}
	return Lit(s)
}

func validVar(s string) bool {
	for i, c := range s {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// key returns the channel's key: api_key, else the variable LiteLLM reads
// for the provider, else a placeholder for keyless local servers.
func (l *litellm) key(ch *Channel, p provider, params []yamlnode.Entry, notes *rowNotes) []Value {
	if k := yamlnode.Text(yamlnode.Get(params, "api_key")); k != "" {
		return []Value{litellmValue(k, true)}
	}
	switch {
	case p.keyEnv != "":
		ch.LineComments["keys"] = "LiteLLM reads " + p.keyEnv + " when api_key is not set"
		return []Value{Env(p.keyEnv)}
	case p.keyless:
		ch.LineComments["keys"] = "placeholder: ccload needs a key, this upstream takes none"
		return []Value{Lit("none")}
	}
	ch.Disabled = true
	notes.add("no api_key")
	return nil
}

// url sets the channel's URL from api_base, so that ccload calls the same
// endpoint LiteLLM does.
func (l *litellm) url(ch *Channel, p provider, apiBase string, notes *rowNotes) {
	var base Value
	switch {
	case apiBase != "":
		base = litellmValue(strings.TrimRight(apiBase, "/"), false)
	case p.base != "":
		base = Lit(p.base)
	default:
		ch.Disabled = true
		notes.add("no api_base")
		return
	}
	lit := !strings.HasPrefix(base.Text, "${")
	if msg := badURL(strings.TrimRight(apiBase, "/")); lit && apiBase != "" && msg != "" {
		ch.Disabled = true
		notes.add("api_base %s", msg)
		return
	}
	u := URL{URL: base, Protocols: []string{p.family}}
	switch {
	case p.family == "anthropic" && strings.HasSuffix(base.Text, "/v1/messages"):
		u.Exact = true
	case p.chatPath && apiBase != "" && (!lit || !strings.HasSuffix(base.Text, "/v1")):
		// LiteLLM posts to api_base + /chat/completions, where ccload would
		// add /v1 as well unless the base ends in /v1.
		u.URL, u.Exact = Join(base, Lit("/chat/completions")), true
		ch.LineComments["urls"] = "LiteLLM appends /chat/completions to api_base"
	}
	ch.URLs = []URL{u}
}

// azure builds the deployment URL and moves the key to the api-key header,
// which is how Azure OpenAI takes a key.
func (l *litellm) azure(ch *Channel, params []yamlnode.Entry, notes *rowNotes) {
	base := litellmValue(strings.TrimRight(yamlnode.Text(yamlnode.Get(params, "api_base")), "/"), false)
	if base.Text == "" {
		base = Env("AZURE_API_BASE")
		ch.Comments = append(ch.Comments, "no api_base: LiteLLM reads AZURE_API_BASE")
	} else if !strings.HasPrefix(base.Text, "${") {
		if msg := badURL(base.Text); msg != "" {
			ch.Disabled = true
			notes.add("api_base %s", msg)
			return
		}
	}
	deployment := ch.Models[0].Name
	if ch.Models[0].Upstream != "" {
		deployment = ch.Models[0].Upstream
	}
	u := URL{Protocols: []string{"openai"}}
	if strings.HasSuffix(base.Text, "/openai/v1") {
		// Azure's v1 API: OpenAI paths, model in the body, no api-version.
		u.URL = base
	} else {
		version := litellmValue(yamlnode.Text(yamlnode.Get(params, "api_version")), false)
		if version.Text == "" {
			version = Env("AZURE_API_VERSION")
			ch.Comments = append(ch.Comments, "no api_version: LiteLLM reads AZURE_API_VERSION")
		}
		u.URL = Join(base, Lit("/openai/deployments/"+url.PathEscape(deployment)+"/chat/completions?api-version="), version)
		u.Exact = true
		ch.Comments = append(ch.Comments, "Azure: the deployment is in the exact URL; the key goes in the api-key header")
	}
	ch.URLs = []URL{u}
	if len(ch.Keys) > 0 {
		ch.Headers = append(ch.Headers,
			Header{Action: "override", Name: "api-key", Value: ch.Keys[0]},
			Header{Action: "remove", Name: "Authorization"})
	}
}

// limits carries rpm, concurrency, weight, order and headers; other
// parameters become notes.
func (l *litellm) limits(ch *Channel, e, params []yamlnode.Entry, notes *rowNotes) {
	for _, src := range [][]yamlnode.Entry{params, e} { // rpm/tpm may sit on the entry itself
		if v := yamlnode.Get(src, "rpm"); v != nil {
			if n, ok := number(v); ok && n >= 0 && ch.RPMLimit == 0 {
				ch.RPMLimit = int(math.Ceil(n))
			}
		}
		if v := yamlnode.Get(src, "tpm"); v != nil {
			notes.add("tpm %s (ccload has no tokens-per-minute limit)", yamlnode.Text(v))
		}
	}
	for _, kv := range params {
		v := kv.Val
		switch kv.Key {
		case "model", "api_key", "api_base", "api_version", "custom_llm_provider", "litellm_credential_name",
			"rpm", "tpm", "input_cost_per_token", "output_cost_per_token",
			"cache_read_input_token_cost", "cache_creation_input_token_cost":
		case "max_parallel_requests":
			if n, ok := number(v); ok && n >= 0 {
				ch.MaxConcurrency = int(n)
			}
		case "weight":
			if n, ok := number(v); ok && n > 0 {
				ch.Weight = max(1, int(math.Round(n)))
				if float64(ch.Weight) != n {
					ch.LineComments["weight"] = "LiteLLM weight " + yamlnode.Text(v) + ", rounded"
				}
			}
		case "order":
			if n, ok := number(v); ok {
				ch.Priority = -int(n)
				ch.LineComments["priority"] = "LiteLLM order " + yamlnode.Text(v) + " (lower order first; ccload tries higher priority first)"
			}
		case "organization":
			ch.Headers = append(ch.Headers, Header{Action: "override", Name: "OpenAI-Organization", Value: litellmValue(yamlnode.Text(v), false)})
		case "extra_headers", "headers":
			for _, h := range yamlnode.Pairs(v) {
				if !headerToken(h.Key) {
					notes.add("%s: %q is not a valid header name", kv.Key, oneLine(h.Key, 40))
					continue
				}
				ch.Headers = append(ch.Headers, Header{Action: "override", Name: h.Key, Value: litellmValue(yamlnode.Text(h.Val), secretish(h.Key))})
			}
		case "timeout", "stream_timeout", "max_retries", "num_retries":
			notes.add("%s %s for this deployment (ccload's timeouts and attempts are set in routing:)", kv.Key, yamlnode.Text(v))
		default:
			if secretish(kv.Key) {
				notes.add("litellm_params.%s (value not copied)", kv.Key)
			} else {
				notes.add("litellm_params.%s: %s", kv.Key, oneLine(flow(v), 60))
			}
		}
	}
}

// price carries per-token costs to pricing: (USD per million tokens).
func (l *litellm) price(model string, params, info []yamlnode.Entry) {
	cost := func(key string) (float64, bool) {
		for _, src := range [][]yamlnode.Entry{params, info} {
			if f, ok := number(yamlnode.Get(src, key)); ok {
				return math.Round(f*1e12) / 1e6, true
			}
		}
		return 0, false
	}
	var p Price
	in, ok1 := cost("input_cost_per_token")
	out, ok2 := cost("output_cost_per_token")
	cr, ok3 := cost("cache_read_input_token_cost")
	cw, ok4 := cost("cache_creation_input_token_cost")
	if !ok1 && !ok2 && !ok3 && !ok4 {
		return
	}
	p = Price{Model: model, Input: in, Output: out, CacheRead: cr, CacheWrite: cw, Comment: "from LiteLLM *_cost_per_token"}
	if i, ok := l.prices[model]; ok {
		q := l.cfg.Pricing[i]
		if q.Input != p.Input || q.Output != p.Output || q.CacheRead != p.CacheRead || q.CacheWrite != p.CacheWrite {
			l.note("%s has different prices in two deployments; ccload prices by model, the first was kept", model)
		}
		return
	}
	l.prices[model] = len(l.cfg.Pricing)
	l.cfg.Pricing = append(l.cfg.Pricing, p)
}

// headerToken reports whether s is an HTTP header name (RFC 9110 token).
func headerToken(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}
