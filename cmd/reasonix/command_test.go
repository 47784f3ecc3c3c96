package main

import (
	"bytes"
	"flag"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// cliRun runs the CLI in-process and returns stdout, stderr and the exit code.
func cliRun(args ...string) (string, string, int) {
	var stdout, stderr bytes.Buffer
	code := cli(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// everyCommand lists the path of every command and group in the table.
func everyCommand() [][]string {
	var out [][]string
	var walk func(c *command, path []string)
	walk = func(c *command, path []string) {
		for _, s := range c.subs {
			p := append(slices.Clone(path), s.name)
			out = append(out, p)
			walk(s, p)
		}
	}
	walk(commands(), nil)
	return out
}

// ownFlags are the flag names a command registers, as typed.
func ownFlags(path []string) []string {
	c := commands()
	for _, name := range path {
		c = c.sub(name)
	}
	var names []string
	if len(c.subs) == 0 {
		fs, _ := c.newFlagSet(strings.Join(path, " "))
		fs.VisitAll(func(f *flag.Flag) { names = append(names, flagName(f.Name)) })
	}
	return names
}

func TestEveryCommandExplainsItself(t *testing.T) {
	paths := everyCommand()
	for _, want := range [][]string{{"serve"}, {"run"}, {"tasks", "submit"}, {"tasks", "resume"}, {"approvals", "show"},
		{"config", "check"}, {"mcp", "list"}, {"migrate"}, {"doctor"}, {"version"}, {"init"}, {"completion"}} {
		if !slices.ContainsFunc(paths, func(p []string) bool { return slices.Equal(p, want) }) {
			t.Errorf("the command table lacks %q", want)
		}
	}
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z]{2,}`)
	for _, path := range paths {
		name := strings.Join(path, " ")
		t.Run(name, func(t *testing.T) {
			help, stderr, code := cliRun(append(slices.Clone(path), "--help")...)
			if code != exitOK || stderr != "" {
				t.Fatalf("%s --help: exit %d, stderr %q", name, code, stderr)
			}
			_, examples, _ := strings.Cut(help, "\nExamples:\n")
			if !strings.HasPrefix(help, "Usage:\n  reasonix "+name) || !strings.Contains(examples, "reasonix "+path[0]) {
				t.Errorf("%s --help lacks its synopsis or examples:\n%s", name, help)
			}
			for _, variant := range [][]string{append(slices.Clone(path), "-h"), append([]string{"help"}, path...)} {
				if out, _, code := cliRun(variant...); code != exitOK || out != help {
					t.Errorf("%q: exit %d, output differs from --help:\n%s", variant, code, out)
				}
			}
			for _, f := range ownFlags(path) {
				if !strings.Contains(help, "  "+f) && !strings.Contains(help, ", "+f) {
					t.Errorf("%s --help does not list its flag %s:\n%s", name, f, help)
				}
			}
			if singleDash.MatchString(help) {
				t.Errorf("%s --help prints a long flag with one dash:\n%s", name, help)
			}
		})
	}
}

func TestHelpShowsOnlyTheCommandsOwnFlags(t *testing.T) {
	submit, _, _ := cliRun("tasks", "submit", "--help")
	for _, other := range []string{"--state", "--source", "--all", "--note", "--scope"} {
		if strings.Contains(submit, other) {
			t.Errorf("tasks submit --help shows %s, a flag of another command:\n%s", other, submit)
		}
	}
	for _, own := range []string{"--posture ask|auto|yolo", "--wait", "--workspace NAME", "--server URL", "PROMPT..."} {
		if !strings.Contains(submit, own) {
			t.Errorf("tasks submit --help lacks %q:\n%s", own, submit)
		}
	}
	run, _, _ := cliRun("help", "run")
	if !strings.Contains(run, "--auto, -y") || strings.Contains(run, "\n  -y") {
		t.Errorf("run's -y should be shown beside --auto:\n%s", run)
	}
	top, _, code := cliRun("help")
	if code != exitOK || !strings.Contains(top, "tasks ") || !strings.Contains(top, "list, show, submit, watch, message, cancel, resume") {
		t.Errorf("reasonix help: exit %d\n%s", code, top)
	}
	group, _, code := cliRun("help", "tasks")
	if code != exitOK || group == top || !strings.Contains(group, "Usage:\n  reasonix tasks COMMAND") {
		t.Errorf("reasonix help tasks printed the top-level help or nothing: exit %d\n%s", code, group)
	}
}

func TestUnknownNamesSuggestTheNearest(t *testing.T) {
	cases := []struct {
		args []string
		want string
		hint string
	}{
		{[]string{"taks"}, `unknown command "taks"; did you mean "tasks"?`, `Run "reasonix help" for usage.`},
		{[]string{"tasks", "lst"}, `unknown tasks command "lst"; did you mean "list"?`, `Run "reasonix help tasks" for usage.`},
		{[]string{"approvals", "alow", "a_1"}, `did you mean "allow"?`, `reasonix help approvals"`},
		{[]string{"tasks", "list", "--stat", "x"}, "unknown flag --stat; did you mean --state?", `Run "reasonix help tasks list" for usage.`},
		{[]string{"run", "--auot", "x"}, "did you mean --auto?", `reasonix help run"`},
		{[]string{"help", "tsks"}, `did you mean "tasks"?`, ""},
		{[]string{"completion", "bsh"}, `did you mean "bash"?`, ""},
		{[]string{"frobnicate"}, `unknown command "frobnicate" (serve, run,`, ""},
	}
	for _, c := range cases {
		_, stderr, code := cliRun(c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, c.hint) {
			t.Errorf("%q: exit %d, stderr %q; want %q and %q", c.args, code, stderr, c.want, c.hint)
		}
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"tasks"}, "tasks needs a command: list, show"},
		{[]string{"tasks", "show"}, "tasks show needs ID, e.g. reasonix tasks show"},
		{[]string{"tasks", "show", "a", "b"}, "tasks show takes ID, got 2 arguments"},
		{[]string{"doctor", "extra"}, `doctor takes no arguments, got "extra"`},
		{[]string{"run", "--posture", "maybe", "x"}, `invalid value "maybe" for flag --posture: want ask, auto or yolo`},
		{[]string{"tasks", "submit", "--posture", "sometimes", "x"}, "want ask, auto or yolo"},
		{[]string{"run", "--max-steps"}, "flag needs an argument: --max-steps"},
	}
	for _, c := range cases {
		_, stderr, code := cliRun(c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want it to contain %q", c.args, code, stderr, c.want)
		}
	}
	if _, stderr, code := cliRun(); code != exitUsage || !strings.Contains(stderr, "Usage:\n  reasonix COMMAND") {
		t.Errorf("no arguments: exit %d\n%s", code, stderr)
	}
	if out, _, code := cliRun("--version"); code != exitOK || out != "reasonix "+version+"\n" {
		t.Errorf("--version: exit %d %q", code, out)
	}
}

func TestPostureFlagParsesAtTheEdge(t *testing.T) {
	var mode string
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	fs.Var(postureValue{&mode}, "posture", "")
	old := &deprecatedFlag{Value: postureValue{&mode}}
	fs.Var(old, "permission-mode", "")
	if err := fs.Parse([]string{"--posture", " YOLO "}); err != nil || mode != "yolo" || old.used {
		t.Fatalf("--posture YOLO: err %v, mode %q, deprecated used %v", err, mode, old.used)
	}
	if err := fs.Parse([]string{"--permission-mode", "auto"}); err != nil || mode != "auto" || !old.used {
		t.Fatalf("--permission-mode auto: err %v, mode %q, deprecated used %v", err, mode, old.used)
	}
	if err := fs.Parse([]string{"--posture", "always"}); err == nil || mode != "auto" {
		t.Fatalf("--posture always: err %v, mode %q (must be rejected and leave the value)", err, mode)
	}
}

func TestCheckArity(t *testing.T) {
	cases := []struct {
		synopsis string
		n        int
		ok       bool
	}{
		{"", 0, true}, {"", 1, false},
		{"ID", 0, false}, {"ID", 1, true}, {"ID", 2, false},
		{"ID TEXT...", 1, false}, {"ID TEXT...", 5, true},
		{"[COMMAND] [SUBCOMMAND]", 0, true}, {"[COMMAND] [SUBCOMMAND]", 2, true}, {"[COMMAND] [SUBCOMMAND]", 3, false},
	}
	for _, c := range cases {
		err := checkArity("x", &command{args: c.synopsis}, make([]string, c.n))
		if (err == nil) != c.ok {
			t.Errorf("%q with %d arguments: %v", c.synopsis, c.n, err)
		}
	}
}

func TestEveryLeafCanRun(t *testing.T) {
	for _, path := range everyCommand() {
		c := commands()
		for _, name := range path {
			c = c.sub(name)
		}
		if (len(c.subs) == 0) != (c.flags != nil) {
			t.Errorf("%q: a command needs either subcommands or a flag builder, not both or neither", path)
		}
		if c.summary == "" || c.example == "" {
			t.Errorf("%q lacks a summary or an example", path)
		}
	}
}
