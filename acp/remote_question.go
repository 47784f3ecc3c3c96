package acp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"reasonix/runner/apitype"
)

// A service task's goal that stops on a question (the "question" event,
// then the task blocked) is asked in the editor as a local goal's is
// (askQuestion: a form, or a goal-question-<n> card): an answer, or "go on
// with your best judgement", goes to the task as a message through the
// API, under the token's principal — the same door chat and the dashboard
// answer through, so the service records who answered and the goal
// resumes with it. "I'll answer in my next message" (or a declined form)
// ends the running prompt; the next prompt is then the answer. A question
// answered elsewhere meanwhile withdraws the editor's.

// questionOf is the question of a "question" event, "" when it has none.
func questionOf(ev apitype.Event) string {
	var q struct {
		Question string `json:"question"`
	}
	if json.Unmarshal(ev.Payload, &q) != nil {
		return ""
	}
	return strings.TrimSpace(q.Question)
}

// isUserMessage reports whether ev is a person's message to the task.
func isUserMessage(ev apitype.Event) bool {
	var m struct {
		Role string `json:"role"`
	}
	return ev.Type == "message" && json.Unmarshal(ev.Payload, &m) == nil && m.Role == "user"
}

// openQuestion finds, in a task's log, the goal question no message has
// answered since.
type openQuestion struct {
	seq  int64
	text string
}

func (o *openQuestion) see(ev apitype.Event) {
	switch {
	case ev.Type == "question":
		if q := questionOf(ev); q != "" {
			o.seq, o.text = ev.Seq, q
		}
	case isUserMessage(ev):
		o.seq, o.text = 0, ""
	}
}

// askQuestion asks the editor the question of event seq, once, and sends
// the answer to the task; without an answer it ends a running prompt.
func (s *rsession) askQuestion(seq int64, question string) {
	key := "question:" + strconv.FormatInt(seq, 10)
	s.mu.Lock()
	if _, done := s.asked[key]; done || s.closed {
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.asked[key] = cancel
	s.asking++
	task := s.task
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		answer, _, ok := s.r.a.askQuestion(ctx, s.id, &s.questions, question)
		withdrawn := ctx.Err() != nil
		cancel()
		s.mu.Lock()
		s.asked[key] = nil // asked; never again
		s.asking--
		s.mu.Unlock()
		switch {
		case withdrawn:
			// Answered elsewhere, cancelled or closed: the prompt goes on
			// with the task, or has ended already.
		case ok:
			if _, err := s.r.c.Message(s.ctx, task, answer); err != nil {
				if s.ctx.Err() == nil {
					s.say("The service did not take your answer to task " + task + ": " + refusal(err))
					s.stopArmed("end_turn")
				}
				return
			}
			s.follow() // the continuation, if nothing follows the task now
		default:
			s.stopArmed("end_turn") // the next prompt is the answer
		}
	}()
}

// withdrawQuestions withdraws the goal questions open in the editor.
func (s *rsession) withdrawQuestions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, stop := range s.asked {
		if stop != nil && strings.HasPrefix(key, "question:") {
			stop()
		}
	}
}

// stopArmed ends the running prompt with reason if the task's log has
// shown the prompt's own message (so the question is the prompt's).
func (s *rsession) stopArmed(reason string) {
	s.mu.Lock()
	w := s.waiting
	if w == nil || !w.armed {
		s.mu.Unlock()
		return
	}
	s.waiting = nil
	s.mu.Unlock()
	w.done <- reason
}
