package config

// Store drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Store is the [store] table: where tasks, transcripts and the queue live.
type Store struct {
	Driver string `toml:"driver"` // sqlite (default) | postgres
	// Path is the data directory (the SQLite file and workspaces live
	// there); "" = the Reasonix home. A relative path is resolved against
	// the config file that set it. See Config.DataDir.
	Path string `toml:"path"`
	// DSNEnv names the variable holding the Postgres DSN; required for postgres.
	DSNEnv string `toml:"dsn_env"`
}

func (s *Store) validate(c *Config, p *problems) {
	checkOneOf(p, c.origins["store.driver"], "store.driver", s.Driver, DriverSQLite, DriverPostgres)
	checkEnvName(p, c.origins["store.dsn_env"], "store.dsn_env", s.DSNEnv)
	if s.Driver == DriverPostgres && s.DSNEnv == "" {
		p.add(c.origins["store.driver"], "store.dsn_env", "is required with driver = \"postgres\" (name the variable holding the DSN)")
	}
}
