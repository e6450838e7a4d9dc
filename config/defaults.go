package config

import "time"

// Values the file may use for enumerated fields.
const (
	KeyRoundRobin = "round_robin" // rotate over the keys that are not cooling
	KeySequential = "sequential"  // the first key that is not cooling

	DriverSQLite   = "sqlite"
	DriverMySQL    = "mysql"
	DriverPostgres = "postgres"

	ActionOverride = "override" // set the header or body path to Value
	ActionRemove   = "remove"   // delete the header or body path
)

// The defaults below are applied before a section is decoded, so a key the
// file leaves out keeps its default here and nowhere else. Each is copied by
// value; none holds a slice or map, so copies share nothing.

// DefaultServer is the `server:` section when the file says nothing.
var DefaultServer = Server{
	Listen:        "127.0.0.1:8080",
	MaxBodyBytes:  10 << 20, // 10MiB
	Limits:        DefaultServerLimits,
	WebSockets:    DefaultWebSockets,
	DebugMaxBytes: 64 << 10, // 64KiB
}

// DefaultStorage is the `storage:` section when the file says nothing.
var DefaultStorage = Storage{
	Driver:       DriverSQLite,
	DSN:          "data/ccload.db",
	LogRetention: Duration(7 * 24 * time.Hour),
	LogQueue:     10000,
}

// DefaultRouting is the `routing:` section when the file says nothing.
var DefaultRouting = Routing{
	Cooldown: Cooldown{
		Auth:      Duration(5 * time.Minute),
		RateLimit: Duration(time.Minute),
		Server:    Duration(2 * time.Minute),
		Timeout:   Duration(time.Minute),
		Min:       Duration(10 * time.Second),
		Max:       Duration(30 * time.Minute),
		Fallback:  true,
	},
	Timeouts: Timeouts{
		FirstByte: Duration(30 * time.Second),
		NonStream: Duration(120 * time.Second),
		Stream:    0, // a stream may run as long as it keeps sending
		// Above first_byte × a few attempts, below the 10 minutes coding
		// agents wait before giving up on their own.
		Request: Duration(5 * time.Minute),
	},
	MaxAttempts: 6,
	Unpriced:    UnpricedRefuse,
	Affinity: Affinity{
		Enabled:     true,
		TTL:         Duration(time.Hour),
		MaxSessions: 50000,
		MaxShare:    0.75,
	},
	HealthScore: HealthScore{
		Enabled:    true,
		Window:     Duration(30 * time.Minute),
		MinSamples: 20,
		Penalty:    100,
	},
}

// DefaultChannel holds the defaults of one `channels:` entry.
var DefaultChannel = Channel{
	Priority:       0,
	Weight:         1,
	KeyStrategy:    KeyRoundRobin,
	CostMultiplier: 1.0,
	Enabled:        true,
	Affinity:       true,
}

// DefaultCheck holds the defaults of a channel's `check:`.
var DefaultCheck = Check{Every: Duration(time.Hour)}
