package dashboard

import (
	"encoding/json"

	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

// prView is the task page's pull request and the CI on its head commit
// (result.pr, and its ci under [workspaces.publish] wait_ci), kept current
// while the task waits for CI by the ci_updated events the live stream
// carries.
type prView struct {
	URL    string
	Number int
	State  string // open, closed, merged
	CI     *ciView
}

type ciView struct {
	State   string // waiting, fixing, success, failure, timeout, error
	Commit  string
	Fixes   int
	Passing int
	Checks  []checkView
}

type checkView struct {
	Name, State, Summary, URL string
	Icon                      string // ✓ ✗ ▸
}

// prOf is t's pull request as its result records it, updated by any
// ci_updated event of evs newer than that record; nil without one.
func prOf(t store.Task, evs []store.Event) *prView {
	var pr *prView
	if t.Result != nil && t.Result.PR != nil {
		p := t.Result.PR
		pr = &prView{URL: p.URL, Number: p.Number, State: p.State}
		if p.CI != nil {
			pr.CI = ciViewOf(p.CI.State, p.CI.Commit, p.CI.Fixes, p.CI.Checks)
		}
		return pr
	}
	// A result without the PR (an older record): the latest event says.
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == "ci_updated" {
			return prFromEvent(evs[i])
		}
	}
	return nil
}

// prFromEvent reads a ci_updated event; nil for a payload of another shape.
func prFromEvent(e store.Event) *prView {
	var p struct {
		State  string          `json:"state"`
		Commit string          `json:"commit"`
		Fixes  int             `json:"fixes"`
		Checks []store.CICheck `json:"checks"`
		PR     struct {
			URL    string `json:"url"`
			Number int    `json:"number"`
			State  string `json:"state"`
		} `json:"pr"`
	}
	if json.Unmarshal(e.Payload, &p) != nil {
		return nil
	}
	return &prView{URL: p.PR.URL, Number: p.PR.Number, State: p.PR.State, CI: ciViewOf(p.State, p.Commit, p.Fixes, p.Checks)}
}

func ciViewOf(state, commit string, fixes int, checks []store.CICheck) *ciView {
	v := &ciView{State: state, Commit: apitype.ShortCommit(commit), Fixes: fixes}
	for _, c := range checks {
		cv := checkView{Name: c.Name, State: c.State, Summary: c.Summary, URL: c.URL, Icon: "▸"}
		switch c.State {
		case store.CISuccess:
			cv.Icon = "✓"
			v.Passing++
		case store.CIFailure:
			cv.Icon = "✗"
		}
		v.Checks = append(v.Checks, cv)
	}
	return v
}
