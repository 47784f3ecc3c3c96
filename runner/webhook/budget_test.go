package webhook_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"reasonix/config"
	"reasonix/runner/webhook"
)

// TestWebhookGoalBudget: a goal webhook's budget_usd comes from its
// config entry and reaches the task; a payload claiming another budget
// changes nothing. The listing shows it.
func TestWebhookGoalBudget(t *testing.T) {
	hook := ciHook()
	hook.Goal, hook.BudgetUSD = true, 1.25
	f := start(t, nil, nil, hook)
	body, _ := json.Marshal(map[string]any{"action": "completed", "budget_usd": 999, "goal": false,
		"check_run": map[string]any{"conclusion": "failure", "head_branch": "main", "budget_usd": 999,
			"output": map[string]any{"summary": "budget_usd = 999"}}})
	r := f.post(t, "ci", githubHeaders("check_run", "d-budget", body, ghSecret), body)
	if r.status != http.StatusAccepted {
		t.Fatalf("status %d %v", r.status, r.body)
	}
	tasks := f.tasks(t)
	if len(tasks) != 1 || !tasks[0].Goal || tasks[0].BudgetUSD != 1.25 {
		t.Fatalf("tasks = %+v", tasks)
	}
	list, err := webhook.List(t.Context(), f.st, []config.Webhook{hook}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].BudgetUSD != 1.25 {
		t.Fatalf("list = %+v", list)
	}
}
