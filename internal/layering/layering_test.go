package layering

import (
	"os/exec"
	"strings"
	"testing"
)

// allowed maps a package (or a package tree, with a trailing "/...") to the
// module packages it may import. Every package may import internal/...;
// a package may import its own subtree only where listed.
var allowed = map[string][]string{
	"internal/...":                {},
	"agent":                       {},
	"agent/httpstream":            {"agent"},
	"agent/openai":                {"agent", "agent/httpstream"},
	"agent/anthropic":             {"agent", "agent/httpstream"},
	"agent/responses":             {"agent", "agent/httpstream"},
	"agent/builtin":               {"agent", "policy"},
	"agent/agenttest":             {"agent"},
	"agent/recipe":                {},
	"policy":                      {"agent"},
	"policy/policytest":           {"agent", "policy"},
	"mcp":                         {"agent"},
	"mcp/mcptest":                 {"agent", "mcp"},
	"goals":                       {"agent", "policy", "agent/recipe"},
	"goals/...":                   {"agent", "policy", "goals", "agent/recipe"},
	"config":                      {},
	"runner":                      {"agent", "agent/recipe", "policy", "goals", "mcp", "config", "runner/..."},
	"runner/internal/cluster":     {"runner/store"},                          // node, hand-over, scratch moves: handed what they need, never runner
	"runner/internal/execute":     {"agent", "runner/store"},                 // handed what it needs, never runner
	"runner/internal/maintenance": {"runner/store", "runner/cron", "config"}, // the upkeep loops and the schedules' firing: handed what they need, never runner
	"runner/internal/publish":     {"runner/store", "runner/forge"},          // the publish outbox: handed a forge and a target, never runner
	"runner/internal/taskrun":     {"agent", "goals", "config", "runner/session", "runner/store", "runner/internal/execute"},
	"runner/...":                  {"agent", "agent/recipe", "policy", "goals", "mcp", "config", "runner", "runner/..."},
	"runner/apitype":              {}, // the wire types: for programs outside the service too
	"runner/client":               {"runner/apitype"},
	"runner/forge":                {},
	"runner/forge/forgetest":      {"runner/forge"},
	"bot":                         {"runner", "policy", "agent", "agent/recipe", "config", "bot/..."},
	"bot/...":                     {"runner", "policy", "agent", "agent/recipe", "config", "bot", "bot/..."},
	// acp: the editor's door; its sessions are assembled by runner/session,
	// or (--server) are the service's tasks, reached through its client.
	"acp":                         {"agent", "agent/recipe", "policy", "goals", "config", "runner/session", "runner/client", "runner/apitype"},
	"cmd/reasonix":                {"..."},
	"cmd/reasonix-plugin-example": {},
	// deploy/ holds artefacts; its Go packages are only their tests.
	"deploy":     {},
	"deploy/...": {},
}

const module = "reasonix"

func TestImportsFollowThePackageMap(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "" {
			continue
		}
		rules, ok := rulesFor(pkg)
		if !ok {
			t.Errorf("package %s is not in the package map; add it to the guide and to this test", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if strings.HasPrefix(dep, "internal/") || permits(rules, dep) {
				if isTestHelper(dep) && !isTestHelper(pkg) && pkg != "cmd/reasonix" {
					t.Errorf("%s imports the test helper %s outside tests", pkg, dep)
				}
				continue
			}
			t.Errorf("%s may not import %s (allowed: %v)", pkg, dep, rules)
		}
	}
}

func TestNoProductionCodeImportsTestHelpers(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/cmd/reasonix").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for dep := range strings.SplitSeq(string(out), "\n") {
		if strings.HasPrefix(dep, module+"/") && isTestHelper(strings.TrimPrefix(dep, module+"/")) {
			t.Errorf("the reasonix binary links the test helper %s", dep)
		}
	}
}

func rulesFor(pkg string) ([]string, bool) {
	if r, ok := allowed[pkg]; ok {
		return r, true
	}
	for p := pkg; strings.Contains(p, "/"); {
		p = p[:strings.LastIndex(p, "/")]
		if r, ok := allowed[p+"/..."]; ok {
			return r, true
		}
	}
	return nil, false
}

func permits(rules []string, dep string) bool {
	for _, r := range rules {
		if r == "..." || r == dep || (strings.HasSuffix(r, "/...") && strings.HasPrefix(dep, strings.TrimSuffix(r, "..."))) {
			return true
		}
	}
	return false
}

func isTestHelper(pkg string) bool {
	last := pkg[strings.LastIndex(pkg, "/")+1:]
	return strings.HasSuffix(last, "test") && last != "test"
}

// The chat layer is an add-on of the service: it drives runner.Service and
// uses the names runner exports, never the store or another package under
// runner (its tests may, through the test kits: only a package's non-test
// imports are checked). Widening the map for a shortcut fails here.
func TestBotSeesRunnerOnlyThroughItsRoot(t *testing.T) {
	for _, pkg := range []string{"bot", "bot/relay", "bot/slack", "bot/telegram", "bot/bottest", "bot/someday"} {
		rules, ok := rulesFor(pkg)
		if !ok {
			t.Fatalf("%s is not in the package map", pkg)
		}
		if !permits(rules, "runner") {
			t.Errorf("%s may not import runner, the service's API", pkg)
		}
		for _, under := range []string{"runner/store", "runner/session", "runner/httpapi", "runner/runnertest", "runner/anything"} {
			if permits(rules, under) {
				t.Errorf("%s may import %s; the chat layer uses runner's API only", pkg, under)
			}
		}
	}
}
