package main

import (
	"strings"
	"testing"
)

// TestConfigCheckAcceptsTheSeedSample: `reasonix config check` on the seed
// specification's §5 configuration sample (as printed, and with every key
// it mentions switched on) exits 0, with a warning for each key this
// service ignores.
func TestConfigCheckAcceptsTheSeedSample(t *testing.T) {
	home := t.TempDir()
	for k, v := range map[string]string{"REASONIX_HOME": home, "HOME": home, "REASONIX_ADDR": "", "REASONIX_DATA_DIR": "",
		"REASONIX_STORE_DSN": "", "REASONIX_CONFIG": "", "DEEPSEEK_API_KEY": "k", "STRIPE_KEY": "k"} {
		t.Setenv(k, v)
	}
	for file, warnings := range map[string]int{"seed_sample.toml": 7, "seed_sample_all.toml": 26} {
		stdout, stderr, code := cliRun("config", "check", "--config", "../../config/testdata/"+file)
		if code != exitOK {
			t.Errorf("%s: exit %d, want 0\n%s%s", file, code, stdout, stderr)
		}
		if got := strings.Count(stdout, "warning: "); got != warnings || !strings.Contains(stdout, "configuration ok") {
			t.Errorf("%s: %d warnings, want %d:\n%s", file, got, warnings, stdout)
		}
	}
}
