package policy

import (
	"fmt"
	"testing"
)

// BenchmarkDecide measures one typical shell decision against a policy of
// 1,000 rules spread over the three lists.
func BenchmarkDecide(b *testing.B) {
	var c Config
	for i := range 1000 {
		switch i % 4 {
		case 0:
			c.Deny = append(c.Deny, fmt.Sprintf("Bash(tool%d sub:*)", i))
		case 1:
			c.Ask = append(c.Ask, fmt.Sprintf("Edit(dir%d/**)", i))
		case 2:
			c.Allow = append(c.Allow, fmt.Sprintf("Bash(cmd%d run:*)", i))
		default:
			c.Allow = append(c.Allow, fmt.Sprintf("mcp__srv%d__tool", i))
		}
	}
	c.Deny = append(c.Deny, "Bash(rm -rf*)", "Bash(git push:*)")
	c.Allow = append(c.Allow, "Bash(go test:*)")
	p, err := New(c)
	if err != nil {
		b.Fatal(err)
	}
	args := bashArgs("go test ./pkg/... -run TestX -count=1")
	if d := p.Decide("bash", false, args); d != Allow {
		b.Fatalf("decision %v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Decide("bash", false, args)
	}
}

// BenchmarkShellStaysInside measures the unsandboxed auto check on a
// typical command: a directory, a build, a log and an in-place edit.
func BenchmarkShellStaysInside(b *testing.B) {
	ws := b.TempDir()
	const cmd = "mkdir -p build && go build -o build/app ./cmd/app 2>&1 | tee build.log && sed -i s/a/b/ main.go"
	if ok, why := ShellStaysInside(cmd, ws, nil); !ok {
		b.Fatal(why)
	}
	b.ReportAllocs()
	for b.Loop() {
		ShellStaysInside(cmd, ws, nil)
	}
}
