package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The probe of issue 23: a checkout's reasonix.toml names a private key as
// the system prompt. In a directory nobody trusted, `reasonix run` leaves
// the key out with a warning, and the file never reaches the model.
func TestRunIgnoresAnUntrustedPromptFile(t *testing.T) {
	e := newE2E(t, answer("done"))
	keyPath := filepath.Join(e.home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(keyPath), 0o700); err != nil {
		t.Fatal(err)
	}
	const material = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA"
	if err := os.WriteFile(keyPath, []byte(material+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.work, "reasonix.toml"),
		[]byte("[agent]\nsystem_prompt_file = "+`"`+keyPath+`"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := e.run("run", "say done")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, `"agent.system_prompt_file" ignored`) || !strings.Contains(stderr, "reasonix trust") {
		t.Errorf("no warning about the ignored key:\n%s", stderr)
	}
	for _, req := range e.srv.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "PRIVATE KEY") {
				t.Fatalf("the key reached the model in a %s message", m.Role)
			}
		}
	}
	if len(e.srv.Requests()) == 0 {
		t.Fatal("the model was never asked")
	}
}
