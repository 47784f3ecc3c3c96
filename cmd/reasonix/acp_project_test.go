package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"reasonix/config"
)

// An ACP session's cwd has its own configuration, read with the trust
// rules: an untrusted project file may tighten, never loosen.
func TestACPProjectSettingsReadTheCwdsFileWithTrust(t *testing.T) {
	t.Setenv("REASONIX_HOME", t.TempDir())
	launch := config.Default()
	load := projectSettings(launch, "", "")
	tight, loose := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(tight, "reasonix.toml"), []byte("[permissions]\ndeny = [\"write_file\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(loose, "reasonix.toml"), []byte("[permissions]\nposture = \"yolo\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := load(tight)
	if err != nil || !slices.Contains(set.Permissions.Deny, "write_file") {
		t.Fatalf("the cwd's tightening file: %+v, %v", set, err)
	}
	if _, err := load(loose); !errors.Is(err, config.ErrUntrusted) {
		t.Errorf("an untrusted loosening file: %v, want ErrUntrusted", err)
	}
	if wd, _ := os.Getwd(); wd != "" {
		real, _ := filepath.EvalSymlinks(wd)
		if got, err := load(real); err != nil || got != launch {
			t.Errorf("the launch directory gets %p, %v; want the loaded configuration", got, err)
		}
	}
	if projectSettings(launch, "x.toml", "") != nil || projectSettings(launch, "", "http://127.0.0.1:1") != nil {
		t.Error("--config or --server still reads each cwd's file")
	}
}
