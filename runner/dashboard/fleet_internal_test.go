package dashboard

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"reasonix/goals"
)

// TestFleetEdgesNeverCrossABox: however the graph is shaped — long edges
// over several columns, fans in and out, many rows — no edge runs through
// a box it does not start or end at.
func TestFleetEdgesNeverCrossABox(t *testing.T) {
	n := func(id string, deps ...string) goals.NodeStatus {
		return goals.NodeStatus{ID: id, State: goals.NodeDone, DependsOn: deps}
	}
	shapes := map[string][]goals.NodeStatus{
		"skip a column": {n("a"), n("b", "a"), n("c", "a", "b")},
		"long and wide": {n("a"), n("b"), n("c"), n("d", "a"), n("e", "d"), n("f", "e", "b", "c"), n("g", "a", "f")},
		"row below":     {n("x"), n("y"), n("z", "x"), n("w", "z"), n("v", "y", "w")},
	}
	for name, nodes := range shapes {
		g := layoutFleet(goals.FleetSnapshot{FleetID: "f", Nodes: nodes})
		boxes := map[[2]int]bool{}
		for _, b := range g.Nodes {
			boxes[[2]int{b.X, b.Y}] = true
		}
		for _, e := range g.Edges {
			for _, p := range edgePoints(t, e) {
				for b := range boxes {
					// Inside a box, not on its border where edges start and end.
					if p[0] > b[0] && p[0] < b[0]+nodeW && p[1] > b[1] && p[1] < b[1]+nodeH {
						t.Errorf("%s: edge %s crosses the box at %v (point %v)", name, e, b, p)
					}
				}
			}
		}
	}
}

var pathTok = regexp.MustCompile(`[MCHV]|-?\d+`)

// edgePoints samples the path: every unit along its straight segments,
// and a curve's control polygon, which holds the curve.
func edgePoints(t *testing.T, d string) [][2]int {
	toks := pathTok.FindAllString(d, -1)
	var pts [][2]int
	var x, y int
	num := func(i int) int {
		v, err := strconv.Atoi(toks[i])
		if err != nil {
			t.Fatalf("path %s: %v", d, err)
		}
		return v
	}
	line := func(x2, y2 int) {
		for x != x2 || y != y2 {
			x += sign(x2 - x)
			y += sign(y2 - y)
			pts = append(pts, [2]int{x, y})
		}
	}
	for i := 0; i < len(toks); {
		switch toks[i] {
		case "M":
			x, y = num(i+1), num(i+2)
			i += 3
		case "H":
			line(num(i+1), y)
			i += 2
		case "V":
			line(x, num(i+1))
			i += 2
		case "C":
			for k := 0; k < 3; k++ {
				line(num(i+1+2*k), num(i+2+2*k))
			}
			i += 7
		default:
			t.Fatal(fmt.Sprintf("path %s: unexpected %q", d, toks[i]))
		}
	}
	return pts
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func TestNestedFleetNamesTheNodeThatStartedIt(t *testing.T) {
	g := layoutFleet(goals.FleetSnapshot{FleetID: "fleet-2", Parent: "sa-1", ParentFleet: "fleet-1", ParentID: "api", Depth: 2,
		Nodes: []goals.NodeStatus{{ID: "docs", State: goals.NodeRunning}}})
	if g.Under != "api in fleet-1 (sa-1, depth 2)" {
		t.Fatalf("under = %q", g.Under)
	}
	if top := layoutFleet(goals.FleetSnapshot{FleetID: "fleet-1", Nodes: []goals.NodeStatus{{ID: "api"}}}); top.Under != "" {
		t.Fatalf("a top-level fleet is under %q", top.Under)
	}
}
