package dashboard

import (
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/goals"
	"reasonix/runner/store"
)

// A fleet is drawn on the server as SVG, in layers: a node sits one column
// right of the deepest node it depends on, so every edge runs left to
// right. No layout library and no script: the graph is small (a handful to
// a few dozen sub-agents) and the page must work without JavaScript.
const (
	nodeW, nodeH = 168, 46
	gapX, gapY   = 48, 16
	pad          = 8
)

type fleetNode struct {
	X, Y         int
	ID, State    string
	Label        string // ID, shortened to fit the box
	Tip          string // shown on hover: state, reason, summary, duration, tokens
	TextX, TextY int
}

type fleetGraph struct {
	ID            string
	DomID         string // ID with only characters safe in an element id and url(#…)
	Width, Height int
	Nodes         []fleetNode
	Edges         []string // SVG path data
	Counts        string   // "3 done · 1 running · 1 skipped"
	Under         string   // a nested fleet's parent node: "lead in fleet-1 (sa-…)"
}

// layoutFleet places the snapshot's nodes. A dependency on an unknown node
// is drawn as none; a cycle (which the fleet tool refuses) cannot loop the
// layout: a node on one is placed at the depth reached when it closed.
func layoutFleet(s goals.FleetSnapshot) fleetGraph {
	index := map[string]int{}
	for i, n := range s.Nodes {
		index[n.ID] = i
	}
	depth := make([]int, len(s.Nodes))
	state := make([]int8, len(s.Nodes)) // 0 new, 1 visiting, 2 done
	var visit func(i int) int
	visit = func(i int) int {
		if state[i] != 0 {
			return depth[i]
		}
		state[i] = 1
		d := 0
		for _, dep := range s.Nodes[i].DependsOn {
			if j, ok := index[dep]; ok {
				d = max(d, visit(j)+1)
			}
		}
		depth[i], state[i] = d, 2
		return d
	}
	rows := map[int]int{}
	g := fleetGraph{ID: s.FleetID, DomID: domID(s.FleetID)}
	pos := make([][2]int, len(s.Nodes))
	counts := map[string]int{}
	for i, n := range s.Nodes {
		col := visit(i)
		row := rows[col]
		rows[col]++
		x, y := pad+col*(nodeW+gapX), pad+row*(nodeH+gapY)
		pos[i] = [2]int{x, y}
		g.Width, g.Height = max(g.Width, x+nodeW+pad), max(g.Height, y+nodeH+pad)
		counts[string(n.State)]++
		g.Nodes = append(g.Nodes, fleetNode{X: x, Y: y, ID: n.ID, Label: shorten(n.ID, 20), State: string(n.State), Tip: nodeTip(n),
			TextX: x + 10, TextY: y + 19})
	}
	for i, n := range s.Nodes {
		for _, dep := range n.DependsOn {
			j, ok := index[dep]
			if !ok || j == i {
				continue
			}
			g.Edges = append(g.Edges, edgePath(pos[j], pos[i]))
		}
	}
	var parts []string
	for _, st := range []goals.NodeState{goals.NodeDone, goals.NodeRunning, goals.NodePending, goals.NodeFailed, goals.NodeSkipped} {
		if c := counts[string(st)]; c > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c, st))
		}
	}
	g.Counts = strings.Join(parts, " · ")
	if s.Parent != "" {
		g.Under = fmt.Sprintf("%s in %s (%s, depth %d)", s.ParentID, s.ParentFleet, s.Parent, s.Depth)
	}
	return g
}

// edgePath draws an edge from the box at from to the box at to so that it
// never crosses another box. Between neighbouring columns it is a curve
// inside the gap between them. A longer edge would cut through the
// columns between, so it runs in lanes no box occupies: out into the gap
// after its source's column, up or down to the gap just above its
// target's row, along it to the gap before the target's column, and down
// into the target.
func edgePath(from, to [2]int) string {
	x1, y1 := from[0]+nodeW, from[1]+nodeH/2
	x2, y2 := to[0], to[1]+nodeH/2
	if x2-x1 <= gapX {
		mid := (x1 + x2) / 2
		return fmt.Sprintf("M%d %dC%d %d %d %d %d %d", x1, y1, mid, y1, mid, y2, x2-4, y2)
	}
	lane := to[1] - min(gapY, pad)/2 // above the target's row, below the box over it
	gx1, gx2 := x1+gapX/2, x2-gapX/2
	return fmt.Sprintf("M%d %dH%dV%dH%dV%dH%d", x1, y1, gx1, lane, gx2, y2, x2-4)
}

func nodeTip(n goals.NodeStatus) string {
	tip := n.ID + ": " + string(n.State)
	if n.Reason != "" {
		tip += " (" + n.Reason + ")"
	}
	if len(n.DependsOn) > 0 {
		tip += "\ndepends on " + strings.Join(n.DependsOn, ", ")
	}
	if n.Summary != "" {
		tip += "\n" + n.Summary
	}
	if n.Duration > 0 || n.Tokens > 0 {
		tip += fmt.Sprintf("\n%s, %s tokens", duration(n.Duration), compact(n.Tokens))
	}
	return tip
}

// fleetOf reads a fleet_updated event's snapshot.
func fleetOf(e store.Event) (goals.FleetSnapshot, bool) {
	var s goals.FleetSnapshot
	if e.Type != string(goals.EventFleetUpdated) || json.Unmarshal(e.Payload, &s) != nil || len(s.Nodes) == 0 {
		return goals.FleetSnapshot{}, false
	}
	return s, true
}

// fleetsOf lays out the latest snapshot of each fleet among evs, in the
// order the fleets first appeared.
func fleetsOf(evs []store.Event) []fleetGraph {
	var order []string
	latest := map[string]goals.FleetSnapshot{}
	for _, e := range evs {
		if s, ok := fleetOf(e); ok {
			if _, seen := latest[s.FleetID]; !seen {
				order = append(order, s.FleetID)
			}
			latest[s.FleetID] = s
		}
	}
	out := make([]fleetGraph, len(order))
	for i, id := range order {
		out[i] = layoutFleet(latest[id])
	}
	return out
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// domID keeps letters, digits, '-' and '_' of s, so it can name an element
// and be referenced from url(#…).
func domID(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
}
