package secretenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary act as a program that seals its
// secrets: "seal" seals MODEL_CRED and reports, "plain" only exits, for
// the benchmark's baseline, and "sealquiet" seals and exits.
const helperEnv = "SECRETENV_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "plain":
		os.Exit(0)
	case "sealquiet":
		if err := Receive(); err != nil {
			os.Exit(3)
		}
		if err := Seal([]string{"MODEL_CRED"}); err != nil {
			os.Exit(4)
		}
		os.Exit(0)
	case "seal":
		if err := Receive(); err != nil {
			fmt.Println("receive:", err)
			os.Exit(3)
		}
		fmt.Printf("pid %d\n", os.Getpid())
		if err := Seal([]string{"MODEL_CRED"}); err != nil {
			fmt.Println("seal:", err)
			os.Exit(4)
		}
		environ, err := os.ReadFile("/proc/self/environ")
		if err != nil {
			fmt.Println("environ:", err)
			os.Exit(5)
		}
		dumpable, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		fmt.Printf("environ %q\n", environ)
		fmt.Printf("go-env %q\n", strings.Join(os.Environ(), "\x00"))
		fmt.Printf("dumpable %d\n", dumpable)
		for _, name := range []string{"MODEL_CRED", "GITHUB_TOKEN", "BOT_TOKEN"} {
			fmt.Printf("lookup %s %s\n", name, Getenv(name))
		}
		fmt.Printf("files %s\n", strings.Join(Files(), ","))
		os.Exit(0)
	}
	os.Exit(2)
}

// After Seal, the kernel's view of the environment holds no secret, the
// process (same pid) still finds every one, and it is not dumpable.
func TestSealReexecsWithoutSecrets(t *testing.T) {
	dir := t.TempDir()
	botFile := filepath.Join(dir, "bot")
	if err := os.WriteFile(botFile, []byte("bot-secret-from-a-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=seal",
		"MODEL_CRED=model-secret-value-1", "GITHUB_TOKEN=ghp_secret_value_2", "BOT_TOKEN_FILE="+botFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	lines := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, " ")
		lines[k] = append(lines[k], v)
	}
	pids := lines["pid"]
	if len(pids) != 2 || pids[0] != pids[1] {
		t.Errorf("want the same pid reported before and after the re-exec, got %v", pids)
	}
	for _, view := range []string{"environ", "go-env"} {
		got := strings.Join(lines[view], "")
		for _, secret := range []string{"model-secret-value-1", "ghp_secret_value_2", "MODEL_CRED", "BOT_TOKEN_FILE", botFile, fdEnv} {
			// The descriptor's number stays in the exec-time block (it is
			// no secret); the processes this one starts do not inherit it.
			if strings.Contains(got, secret) && !(view == "environ" && secret == fdEnv) {
				t.Errorf("%s still holds %q: %s", view, secret, got)
			}
		}
		if !strings.Contains(got, "PATH=") {
			t.Errorf("%s lost the ordinary variables: %s", view, got)
		}
	}
	if got := lines["dumpable"]; len(got) != 1 || got[0] != "0" {
		t.Errorf("dumpable = %v, want 0", got)
	}
	want := []string{"MODEL_CRED model-secret-value-1", "GITHUB_TOKEN ghp_secret_value_2", "BOT_TOKEN bot-secret-from-a-file"}
	if got := lines["lookup"]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lookups = %q, want %q", got, want)
	}
	if got := strings.Join(lines["files"], ""); !strings.Contains(got, botFile) {
		t.Errorf("files = %q, want the bot token's file", got)
	}
}

// A variable that points Receive at some other descriptor is refused.
func TestReceiveRefusesAForeignDescriptor(t *testing.T) {
	reset(t)
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Setenv(fdEnv, strconv.Itoa(int(f.Fd())))
	if err := Receive(); err == nil {
		t.Fatal("Receive accepted a plain file as the handover")
	}
	if _, ok := os.LookupEnv(fdEnv); ok {
		t.Error("the handover variable was left for child processes")
	}
}

// BenchmarkStartup measures what Seal adds to a start with one secret in
// the environment: a plain exec of the binary against one that seals (and
// so execs itself once more), interleaved in each iteration.
func BenchmarkStartup(b *testing.B) {
	run := func(mode string) time.Duration {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+mode, "MODEL_CRED=model-secret-value-1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v\n%s", mode, err, out.Bytes())
		}
		return time.Since(start)
	}
	var plain, sealed time.Duration
	for b.Loop() {
		plain += run("plain")
		sealed += run("sealquiet")
	}
	n := float64(b.N)
	b.ReportMetric(float64(plain.Microseconds())/n/1000, "plain-ms/op")
	b.ReportMetric(float64(sealed.Microseconds())/n/1000, "sealed-ms/op")
	b.ReportMetric(float64((sealed-plain).Microseconds())/n/1000, "added-ms/op")
}
