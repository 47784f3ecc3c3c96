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
// the benchmark's baseline, and "sealquiet" seals and exits; the
// "...reexec" variants seal through the re-exec fallback.
const helperEnv = "SECRETENV_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "plain":
		os.Exit(0)
	case "sealquiet", "sealquietreexec":
		if os.Getenv(helperEnv) == "sealquietreexec" {
			scrubInPlace = nil
		}
		if err := Receive(); err != nil {
			os.Exit(3)
		}
		if err := Seal([]string{"MODEL_CRED"}); err != nil {
			os.Exit(4)
		}
		os.Exit(0)
	case "seal", "sealreexec":
		if os.Getenv(helperEnv) == "sealreexec" {
			scrubInPlace = nil
		}
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
		// What a process this one starts inherits.
		child, err := exec.Command("cat", "/proc/self/environ").Output()
		if err != nil {
			fmt.Println("child:", err)
			os.Exit(6)
		}
		fmt.Printf("child-env %q\n", child)
		os.Exit(0)
	}
	os.Exit(2)
}

// After Seal, the kernel's view of the environment holds no secret, nor
// does a child's, the process still finds every one, and it is not
// dumpable: in place (one start, the same process) and, where that is not
// possible, through the re-exec (the same pid, a new image).
func TestSealTakesSecretsOutOfTheEnvironment(t *testing.T) {
	for _, mode := range []string{"seal", "sealreexec"} {
		t.Run(mode, func(t *testing.T) { testSeal(t, mode) })
	}
}

func testSeal(t *testing.T, mode string) {
	dir := t.TempDir()
	botFile := filepath.Join(dir, "bot")
	if err := os.WriteFile(botFile, []byte("bot-secret-from-a-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode,
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
	wantStarts := map[string]int{"seal": 1, "sealreexec": 2}[mode]
	if len(pids) != wantStarts || pids[0] != pids[len(pids)-1] {
		t.Errorf("want the same pid reported %d time(s), got %v", wantStarts, pids)
	}
	for _, view := range []string{"environ", "go-env", "child-env"} {
		got := strings.Join(lines[view], "")
		for _, secret := range []string{"model-secret-value-1", "ghp_secret_value_2", "MODEL_CRED", "BOT_TOKEN_FILE", botFile, fdEnv} {
			// The descriptor's number stays in the exec-time block (it is
			// no secret); the processes this one starts do not inherit it.
			if strings.Contains(got, secret) && !(view == "environ" && secret == fdEnv && mode == "sealreexec") {
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

// blank zeroes exactly the named entries, duplicates included, and keeps
// the block's length and every other entry where it was.
func TestBlank(t *testing.T) {
	block := []byte("PATH=/bin\x00A_TOKEN=s1\x00A_TOKENX=keep\x00=odd\x00A_TOKEN=s2\x00noequals\x00HOME=/h")
	zeros := string(make([]byte, len("A_TOKEN=s1")))
	want := []byte("PATH=/bin\x00" + zeros + "\x00A_TOKENX=keep\x00=odd\x00" + zeros + "\x00noequals\x00HOME=/h")
	if !blank(block, []string{"A_TOKEN"}) {
		t.Fatal("blank found nothing")
	}
	if !bytes.Equal(block, want) {
		t.Fatalf("blank gave %q,\nwant %q", block, want)
	}
	if blank(block, []string{"A_TOKEN"}) {
		t.Fatal("blank found an entry twice")
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
// the environment: a plain exec of the binary against one that seals in
// place and one that seals by execing itself once more (the fallback),
// interleaved in each iteration.
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
	var plain, sealed, reexeced time.Duration
	for b.Loop() {
		plain += run("plain")
		sealed += run("sealquiet")
		reexeced += run("sealquietreexec")
	}
	n := float64(b.N)
	b.ReportMetric(float64(plain.Microseconds())/n/1000, "plain-ms/op")
	b.ReportMetric(float64(sealed.Microseconds())/n/1000, "sealed-ms/op")
	b.ReportMetric(float64((sealed-plain).Microseconds())/n/1000, "added-ms/op")
	b.ReportMetric(float64((reexeced-plain).Microseconds())/n/1000, "added-by-reexec-ms/op")
}
