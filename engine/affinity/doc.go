// Package affinity keeps a client session on the route that holds its
// prompt cache.
//
// Coding agents resend a long, growing prompt on every turn, and providers
// cache it per account: behind one channel and, for some relays, one key.
// Routing every turn afresh (weighted round-robin) spreads a session over
// equal channels and loses the cache on about every other turn. This
// package names the session a request belongs to (Identify) and remembers,
// per client token and session, the channel, key and URL of its last
// success (Table). The engine prefers that route while it is allowed,
// healthy, under its limits and of the best priority on offer; otherwise it
// routes as usual and the session re-pins to whatever served it.
//
// The table is bounded: at most MaxSessions entries, least recently used
// evicted first, entries unused for TTL forgotten. An entry is about 200
// bytes (a 16-byte session hash, the channel name, the key fingerprint and
// the URL, plus map and list overhead), so the default 50,000 sessions
// hold at most about 10 MB.
package affinity
