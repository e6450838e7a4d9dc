// Package pricing computes the USD cost of one request from its token usage.
//
// The prices live in prices.json, embedded in the binary and parsed once by
// Default. Its "sources" list names the pages the numbers were read from and
// when; every entry names its source, and an entry whose number is uncertain
// says so in its "note".
//
// Three layers make the table a request is priced with, highest first:
//
//  1. the `pricing:` entries of the config file (Table.With);
//  2. the price catalog, a models.dev api.json document fetched by the
//     server (ParseCatalog, Table.WithCatalog);
//  3. the embedded table (Default).
//
// A layer replaces a lower layer's entry of the same name whole, except
// that a catalog entry keeps the embedded priority multiplier and one-hour
// cache write price, which the catalog format cannot state.
//
// Model names resolve in this order (Table.Lookup):
//
//  1. the name itself, lower-cased, with a leading "models/" removed;
//  2. the longest known name that the requested name starts with, when what
//     follows is only a version stamp: a date ("-20250929", "-2025-08-07",
//     "@20250929", "-001"), "-latest" or "-preview", optionally followed by
//     more date parts ("-preview-06-05").
//
// So "claude-sonnet-4-5-20250929", "claude-3-7-sonnet-latest" and
// "gemini-2.5-pro-preview-06-05" price as their base model, while
// "claude-opus-4-9", "gpt-5-pro" or "gemini-2.5-flash-image" never borrow
// the price of "claude-opus-4", "gpt-5" or "gemini-2.5-flash": a model that
// is not in the table is unknown, costs 0 and is reported as such (Cost.Known
// false) so that the operator adds it to `pricing:` instead of trusting a
// guess.
//
// What Cost bills, given a Usage (see Usage for the token conventions):
//
//	uncached = u.Input - u.CacheRead - u.CacheWrite - u.CacheWrite1h  (never < 0)
//	USD = ( uncached       * p.Input
//	      + u.CacheRead    * p.CacheRead
//	      + u.CacheWrite   * p.CacheWrite
//	      + u.CacheWrite1h * p.CacheWrite1h
//	      + u.Output       * p.Output ) / 1e6
//	      * service tier ("priority": p.Priority, "flex": 0.5, else 1)
//	      * the channel's cost_multiplier
//
// with u the Usage and p the Price. u.Reasoning is not in the sum: it is
// already part of u.Output.
//
// When the price has a long-context tier and the prompt (Input) is above its
// threshold, the whole request is billed at the long rates: LongInput and
// LongOutput, and the cache prices scaled by LongInput/Input. That is how
// Anthropic (Sonnet 4 / 4.5 with the 1M beta, Haiku 5.5), Google (Gemini Pro
// models) and OpenAI (GPT-5.4 / 5.5 above 272K) bill it, and every one of
// them prices cache reads and writes as the same fraction of input in both
// tiers.
package pricing
