package config

import "testing"

// A schedule or webhook may name a command instead of a prompt; a bad
// name, or args without a command, is an error naming the key.
func TestCommandKeys(t *testing.T) {
	f := newFixture(t)
	f.user("[[schedules]]\nname = \"s\"\ncron = \"@daily\"\ncommand = \"/deps:bump\"\nargs = [\"./...\"]\n")
	if c := f.load(); c.Schedules[0].Command != "/deps:bump" || c.Schedules[0].Args[0] != "./..." {
		t.Fatalf("schedule = %+v", c.Schedules[0])
	}
	for _, c := range []struct{ name, entry, want string }{
		{"bad name", "command = \"deps bump\"", `schedules[s].command: "deps bump" is not a command name`},
		{"path", "command = \"/tmp/x\"", `schedules[s].command: "/tmp/x" is not a command name`},
		{"args alone", "prompt = \"p\"\nargs = [\"x\"]", `schedules[s].args: is set without command`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.user("[[schedules]]\nname = \"s\"\ncron = \"@daily\"\n" + c.entry + "\n")
			wantContains(t, f.loadErr(), c.want)
		})
	}
	f = newFixture(t)
	f.user("[[webhooks]]\nname = \"w\"\nkind = \"github\"\nsecret_env = \"S\"\ncommand = \"ci:fix\"\n")
	if c := f.load(); c.Webhooks[0].Command != "ci:fix" {
		t.Fatalf("webhook = %+v", c.Webhooks[0])
	}
}
