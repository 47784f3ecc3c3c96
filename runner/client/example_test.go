package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"reasonix/runner/apitype"
	"reasonix/runner/client"
)

// A program submits a task, follows its events, allows the calls it waits
// on and prints the answer. (It needs a running `reasonix serve`, so it is
// compiled but not run by the tests.)
func Example() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8080", os.Getenv("REASONIX_API_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	sub, err := c.Submit(ctx, apitype.SubmitRequest{Prompt: "fix the flaky test in store", Workspace: "app"},
		client.IdempotencyKey("nightly-fix-2026-01-02"))
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range c.Watch(ctx, sub.ID, 0) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Type != "approval_requested" {
			continue
		}
		pending, err := c.Approvals(ctx, client.ApprovalFilter{State: apitype.ApprovalPending, TaskID: sub.ID})
		if err != nil {
			log.Fatal(err)
		}
		for _, a := range pending {
			_, err := c.Decide(ctx, a.ID, apitype.DecideRequest{Decision: apitype.AllowOnce, CallHash: a.CallHash})
			if errors.Is(err, client.ErrForbidden) {
				log.Fatalf("this token may not decide %s: %v", a.ID, err)
			}
			if err != nil && !errors.Is(err, client.ErrConflict) { // someone else decided first
				log.Fatal(err)
			}
		}
	}
	task, err := c.Task(ctx, sub.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.State)
	if task.Result != nil {
		fmt.Println(task.Result.FinalAnswer)
	}
}
