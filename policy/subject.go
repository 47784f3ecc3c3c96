package policy

import "encoding/json"

// callArgs are the argument keys a rule's subject is read from. Tools need
// not know about rules: the keys are the conventional ones.
type callArgs struct {
	Command  *string `json:"command"`
	Path     *string `json:"path"`
	FilePath *string `json:"file_path"`
	NewPath  *string `json:"new_path"`
	Pattern  *string `json:"pattern"`
	URL      *string `json:"url"`
}

// subject is what a rule specifier is matched against.
type subject struct {
	command  string   // the shell command, when isShell
	isShell  bool     // the call exposes a command
	paths    []string // path-like subjects; move_file exposes both ends
	patterns []string // a search pattern, when no path is given
	hasURL   bool     // the call names a URL (web_fetch)
	host     string   // its host, lower-case; "" when it has none
}

// extractSubject reads the subject from a call's JSON arguments. Arguments
// that are not a JSON object expose no subject, so only bare rules match.
func extractSubject(args json.RawMessage) subject {
	var a callArgs
	if len(args) == 0 || json.Unmarshal(args, &a) != nil {
		return subject{}
	}
	var s subject
	switch {
	case a.Command != nil:
		s.command, s.isShell = *a.Command, true
	case a.Path != nil || a.FilePath != nil:
		if a.Path != nil {
			s.paths = append(s.paths, *a.Path)
		}
		if a.FilePath != nil {
			s.paths = append(s.paths, *a.FilePath)
		}
		if a.NewPath != nil {
			s.paths = append(s.paths, *a.NewPath)
		}
	case a.Pattern != nil:
		s.patterns = append(s.patterns, *a.Pattern)
	case a.URL != nil:
		s.hasURL, s.host = true, hostOf(*a.URL)
	}
	return s
}

// values lists the non-shell subjects a glob rule is matched against.
func (s subject) values() []string {
	if s.isShell {
		return []string{s.command}
	}
	if len(s.paths) > 0 {
		return s.paths
	}
	return s.patterns
}
