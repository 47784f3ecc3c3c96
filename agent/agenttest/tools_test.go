package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
)

// upper is a tool that keeps the contract, to show the suite passes one.
type upper struct{}

func (upper) Name() string        { return "upper" }
func (upper) Description() string { return "Upper-cases text; waits millis first." }
func (upper) ReadOnly() bool      { return true }
func (upper) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"millis":{"type":"integer"}},"required":["text"],"additionalProperties":false}`)
}

func (upper) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Text   *string `json:"text"`
		Millis int     `json:"millis"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return "", errors.New("upper: arguments must be a JSON object")
	}
	if dec.More() || a.Text == nil {
		return "", errors.New("upper: text is required")
	}
	if a.Millis > 0 {
		t := time.NewTimer(time.Duration(a.Millis) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return strings.ToUpper(*a.Text), nil
}

func TestToolSuitePassesAConformingTool(t *testing.T) {
	TestTool(t, func(*testing.T) agent.Tool { return upper{} }, ToolCases{
		ReadOnly: true,
		Valid:    []string{`{"text":"abc"}`, `{"text":"héllo","millis":1}`},
		Invalid:  []string{`{}`, `{"text":1}`, `{"text":"a","other":1}`},
		Blocking: `{"text":"x","millis":600000}`,
	})
}

func TestSchemaValidation(t *testing.T) {
	s := &objectSchema{}
	if err := json.Unmarshal(upper{}.Schema(), s); err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"text":"a"}`:              "",
		`{"text":"a","millis":2}`:   "",
		`{"text":"a","millis":2.5}`: `"millis" is 2.5`,
		`{"millis":2}`:              `missing required "text"`,
		`{"text":null}`:             `"text" is null`,
		`{"text":"a","x":1}`:        `"x" is not a declared property`,
		`[1]`:                       "not a JSON object",
		`null`:                      "not a JSON object",
	} {
		err := s.validate(args)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("validate(%s) = %v, want %q", args, err, want)
		}
	}
	open := &objectSchema{}
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"n":{"type":["integer","null"]}}}`), open); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"n":null}`, `{"n":3}`, `{"other":"x"}`} {
		if err := open.validate(args); err != nil {
			t.Errorf("validate(%s) = %v, want nil", args, err)
		}
	}
	if err := open.validate(`{"n":"3"}`); err == nil {
		t.Errorf("a string passed as integer or null")
	}
}
