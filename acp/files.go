package acp

import (
	"context"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
)

// editorFiles is the file tools' final read and write through the client
// (fs/read_text_file, fs/write_text_file) when it advertises both: the
// model reads the editor's buffers, unsaved changes included, and its
// edits land in the editor, which shows and keeps them. It replaces only
// the last step: the tools still confine every path, hide forbid_read
// files, refuse binary files and edits of unread versions, and the
// policy still decides every call, exactly as without it.
type editorFiles struct{ l *live }

var _ agent.FileIO = editorFiles{}

// readTextResponse is fs/read_text_file's answer; an empty file is
// "" (the SDK's own type refuses that).
type readTextResponse struct {
	Content string `json:"content"`
}

func (f editorFiles) ReadText(ctx context.Context, path string) (string, error) {
	resp, err := sdk.SendRequest[readTextResponse](f.l.a.conn, ctx, "fs/read_text_file",
		map[string]any{"sessionId": f.l.id, "path": path})
	if err != nil {
		return "", fmt.Errorf("the editor could not read %s: %v", path, err)
	}
	return resp.Content, nil
}

func (f editorFiles) WriteText(ctx context.Context, path, text string) error {
	_, err := sdk.SendRequest[map[string]any](f.l.a.conn, ctx, "fs/write_text_file",
		sdk.WriteTextFileRequest{SessionId: sdk.SessionId(f.l.id), Path: path, Content: text})
	if err != nil {
		return fmt.Errorf("the editor could not write %s: %v", path, err)
	}
	return nil
}

// files is the session's agent.FileIO: the editor's when it can both read
// and write, else nil (the disk). A client that can only read gets the
// disk for both, so a read and the write after it see the same file.
func (l *live) files() agent.FileIO {
	if c := l.a.clientCaps(); c.readFile && c.writeFile {
		return editorFiles{l}
	}
	return nil
}
