// Package config loads and validates Reasonix's TOML configuration.
//
// Values are layered per key: command-line flags (applied by the caller on
// the returned *Config) > the project file (./reasonix.toml, else
// .reasonix/reasonix.toml, or the file named by --config) > the user file
// (~/.reasonix/config.toml, where $REASONIX_HOME replaces ~/.reasonix) >
// built-in defaults. Arrays of tables ([[providers]], [[plugins]],
// [[workspaces]]) merge by name instead: a higher layer's entry replaces the
// lower layer's entry of the same name as a whole. A project-root .mcp.json
// (Claude Code's mcpServers schema) adds plugins above the user file and
// below the project file.
//
// The package holds plain data. It never reads secrets: entries name the
// environment variables that hold them (api_key_env, token_env, dsn_env).
// Errors name the file and the key they are about, so a person can fix the
// file without guessing.
package config
