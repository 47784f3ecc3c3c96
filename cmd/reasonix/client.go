package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// apiClient talks to a running `reasonix serve` for the admin commands.
type apiClient struct {
	base  string
	token string
	http  *http.Client
}

// clientFlags are the flags every API client command takes.
type clientFlags struct {
	config string
	server string
}

// parse reads a client command's flags and arguments and finds the service.
func (f *clientFlags) parse(fs *flag.FlagSet, args []string) (*apiClient, []string, error) {
	rest, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, nil, errHelpShown
	}
	if err != nil {
		return nil, nil, usageErrorf("%v", err)
	}
	c, err := f.newClient()
	return c, rest, err
}

func (f *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "configuration `file` (for the default server address and data dir)")
	fs.StringVar(&f.server, "server", "", "the service's base `URL` (default http://[serve] addr)")
}

// newClient finds the server and the token: REASONIX_API_TOKEN, else the
// variable [serve] api_token_env names, else <data dir>/api-token.
func (f *clientFlags) newClient() (*apiClient, error) {
	cfg, err := loadServiceConfig(f.config)
	if err != nil {
		return nil, err
	}
	base := f.server
	if base == "" {
		base = "http://" + cfg.Serve.Addr
	}
	if _, err := url.Parse(base); err != nil || !strings.HasPrefix(base, "http") {
		return nil, usageErrorf("--server %q is not an http(s) URL", base)
	}
	token := strings.TrimSpace(os.Getenv("REASONIX_API_TOKEN"))
	if token == "" && cfg.Serve.APITokenEnv != "" {
		token = strings.TrimSpace(os.Getenv(cfg.Serve.APITokenEnv))
	}
	if token == "" {
		data, err := os.ReadFile(filepath.Join(cfg.DataDir(), tokenFile))
		if err != nil {
			return nil, &configError{fmt.Errorf("no API token: set REASONIX_API_TOKEN or run this on the service's machine (%s is missing)", filepath.Join(cfg.DataDir(), tokenFile))}
		}
		token = strings.TrimSpace(string(data))
	}
	return &apiClient{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// apiError is the service's error body.
type apiError struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
	Ref     string `json:"ref"`
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("the service answered %d %s: %s", e.Status, e.Code, e.Message)
	if e.Ref != "" {
		msg += " (reference " + e.Ref + ")"
	}
	return msg
}

// do sends a request with body encoded as JSON (when non-nil) and decodes
// the answer into out.
func (c *apiClient) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the service at %s (is `reasonix serve` running?): %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		e := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil || e.Code == "" {
			e.Code, e.Message = http.StatusText(resp.StatusCode), strings.TrimSpace(string(data))
		}
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// task is the service's view of a task, as much as the CLI shows.
type task struct {
	ID        string    `json:"id"`
	Source    string    `json:"source"`
	Requester string    `json:"requester"`
	Prompt    string    `json:"prompt"`
	Goal      bool      `json:"goal"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	Result    *struct {
		Summary     string `json:"summary"`
		FinalAnswer string `json:"final_answer"`
		DiffStat    string `json:"diff_stat"`
		Branch      string `json:"branch"`
		Tokens      struct {
			Prompt     int `json:"prompt"`
			Completion int `json:"completion"`
		} `json:"tokens"`
		Cost       float64 `json:"cost"`
		DurationMS int64   `json:"duration_ms"`
		Error      string  `json:"error"`
	} `json:"result"`
}

type approval struct {
	ID        string    `json:"id"`
	TaskID    string    `json:"task_id"`
	Tool      string    `json:"tool"`
	Subject   string    `json:"subject"`
	Preview   string    `json:"preview"`
	Requester string    `json:"requester"`
	Scopes    []string  `json:"scopes"`
	State     string    `json:"state"`
	Decision  string    `json:"decision"`
	DecidedBy string    `json:"decided_by"`
	ExpiresAt time.Time `json:"expires_at"`
}

// tasksCommand is `reasonix tasks list|show|cancel`.
func tasksCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErrorf("usage: reasonix tasks list|show ID|submit PROMPT|watch ID|message ID TEXT|cancel ID|resume ID [--server URL]")
	}
	var f clientFlags
	fs := flag.NewFlagSet("tasks "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.register(fs)
	state := fs.String("state", "", "list: only tasks in these states (comma-separated)")
	ws := fs.String("workspace", "", "submit: the [[workspaces]] entry to work in (default: a scratch directory)")
	posture := fs.String("posture", "", "submit: ask, auto or yolo (default [permissions] posture)")
	goal := fs.Bool("goal", false, "submit: run the task as a goal")
	planFirst := fs.Bool("plan-first", false, "submit: plan read-only first and wait for the plan's approval")
	wait := fs.Bool("wait", false, "submit: follow the task until it ends, exiting like reasonix run")
	source := fs.String("source", "", "list: only tasks from this source")
	asJSON := fs.Bool("json", false, "print the service's JSON")
	c, rest, err := f.parse(fs, args[1:])
	if err != nil {
		return err
	}
	switch args[0] {
	case "submit":
		prompt := strings.TrimSpace(strings.Join(rest, " "))
		if prompt == "" {
			return usageErrorf("usage: reasonix tasks submit [--workspace W] [--goal] [--wait] PROMPT...")
		}
		body := map[string]any{"prompt": prompt, "source": "cli", "requester": os.Getenv("USER"),
			"workspace": *ws, "posture": *posture, "goal": *goal, "plan_first": *planFirst}
		id, err := c.submitTask(body)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, id)
		if !*wait {
			return nil
		}
		return watchExit(c, id, stdout)
	case "watch":
		if len(rest) != 1 {
			return usageErrorf("usage: reasonix tasks watch ID")
		}
		return watchExit(c, rest[0], stdout)
	case "list":
		q := url.Values{}
		if *state != "" {
			q.Set("state", *state)
		}
		if *source != "" {
			q.Set("source", *source)
		}
		var page struct {
			Tasks []task `json:"tasks"`
		}
		if err := c.do("GET", "/api/v1/tasks?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(page.Tasks)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATE\tSOURCE\tCREATED\tPROMPT")
		for _, t := range page.Tasks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.State, t.Source, t.CreatedAt.Local().Format(time.DateTime), truncate(firstLine(t.Prompt), 60))
		}
		return tw.Flush()
	case "message":
		if len(rest) < 2 {
			return usageErrorf("usage: reasonix tasks message ID TEXT... (steers a running task, continues a finished one)")
		}
		var t task
		body := map[string]string{"text": strings.Join(rest[1:], " "), "requester": os.Getenv("USER")}
		if err := c.do("POST", "/api/v1/tasks/"+url.PathEscape(rest[0])+"/messages", body, &t); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "task %s: %s\n", t.ID, t.State)
		return nil
	case "show", "cancel", "resume":
		if len(rest) != 1 {
			return usageErrorf("usage: reasonix tasks %s ID", args[0])
		}
		var t task
		path := "/api/v1/tasks/" + url.PathEscape(rest[0])
		if args[0] != "show" {
			if err := c.do("POST", path+"/"+args[0], struct{}{}, &t); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "task %s: %s\n", t.ID, t.State)
			return nil
		}
		if err := c.do("GET", path, nil, &t); err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(t)
		}
		printTask(stdout, t)
		return nil
	}
	return usageErrorf("unknown tasks command %q (list, show, submit, watch, message, cancel, resume)", args[0])
}

// exitError ends a command with a given exit code after its output.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// watchExit follows a task to its end and turns its final state into the
// exit code reasonix run would give.
func watchExit(c *apiClient, id string, stdout io.Writer) error {
	ctx, stop := signalContext()
	defer stop()
	t, err := c.watch(ctx, id, stdout)
	if err != nil {
		return err
	}
	printTask(stdout, t)
	if code := taskExit(t.State); code != exitOK {
		return &exitError{code: code, msg: fmt.Sprintf("task %s ended %s", t.ID, t.State)}
	}
	return nil
}

func printTask(w io.Writer, t task) {
	fmt.Fprintf(w, "task      %s\nstate     %s\nsource    %s (%s)\ncreated   %s\nprompt    %s\n",
		t.ID, t.State, t.Source, t.Requester, t.CreatedAt.Local().Format(time.DateTime), t.Prompt)
	if r := t.Result; r != nil {
		if r.Branch != "" {
			fmt.Fprintf(w, "branch    %s\n", r.Branch)
		}
		if r.DiffStat != "" {
			fmt.Fprintf(w, "changes\n%s\n", r.DiffStat)
		}
		fmt.Fprintf(w, "tokens    %d+%d, %s\n", r.Tokens.Prompt, r.Tokens.Completion, time.Duration(r.DurationMS)*time.Millisecond)
		if r.Error != "" {
			fmt.Fprintf(w, "error     %s\n", r.Error)
		}
		if r.FinalAnswer != "" {
			fmt.Fprintf(w, "\n%s\n", r.FinalAnswer)
		}
	}
}

// approvalsCommand is `reasonix approvals list|allow|deny`.
func approvalsCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErrorf("usage: reasonix approvals list|allow ID|deny ID [--server URL]")
	}
	var f clientFlags
	fs := flag.NewFlagSet("approvals "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.register(fs)
	forTask := fs.Bool("task", false, "allow: allow calls like this one for the rest of the task (the first offered scope)")
	scope := fs.String("scope", "", "allow: the task-wide scope to grant (one of the offered scopes)")
	note := fs.String("note", "", "deny: why, passed to the model")
	as := fs.String("as", "", "the approver name recorded with the decision (default $USER)")
	all := fs.Bool("all", false, "list: every approval, not only pending ones")
	c, rest, err := f.parse(fs, args[1:])
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		path := "/api/v1/approvals?state=pending"
		if *all {
			path = "/api/v1/approvals"
		}
		var list struct {
			Approvals []approval `json:"approvals"`
		}
		if err := c.do("GET", path, nil, &list); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTASK\tSTATE\tTOOL\tEXPIRES\tSUBJECT")
		for _, a := range list.Approvals {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.TaskID, a.State, a.Tool, a.ExpiresAt.Local().Format(time.TimeOnly), truncate(firstLine(a.Subject), 60))
		}
		return tw.Flush()
	case "allow", "deny":
		if len(rest) != 1 {
			return usageErrorf("usage: reasonix approvals %s ID", args[0])
		}
		body := map[string]string{"decision": "deny", "approver": cmpString(*as, os.Getenv("USER")), "note": *note}
		if args[0] == "allow" {
			body["decision"] = "allow_once"
			if *forTask || *scope != "" {
				body["decision"], body["scope"] = "allow_task", *scope
			}
		}
		var a approval
		if err := c.do("POST", "/api/v1/approvals/"+url.PathEscape(rest[0]), body, &a); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "approval %s: %s by %s (task %s)\n", a.ID, a.Decision, a.DecidedBy, a.TaskID)
		return nil
	}
	return usageErrorf("unknown approvals command %q (list, allow, deny)", args[0])
}
