package policy

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// maxScriptRead bounds how much of a script file is read to show its
// commands to deny rules; a longer script is not identified.
const maxScriptRead = 256 << 10

// resolveFiles identifies the programs and scripts a command runs by path
// (./x, bin/tool, bash s.sh, source s.sh), so deny rules see through a
// copy or a link of a denied binary and into a shell script:
//
//   - a symbolic link counts as the command it points to (./x → /bin/rm
//     is rm);
//   - a regular file identical in content to a binary a deny rule names
//     (see DeniedCommands; found in the system directories) counts as that
//     command;
//   - a shell script (read by a shell, or a file starting with #! naming
//     one) is parsed and its literal commands are matched by deny rules too;
//     what it computes at run time is left to exec-time enforcement.
//
// A file that cannot be identified before the call runs — it does not
// exist yet, the same call may write it first (any other part of the call
// that is not read-only and not a mere carrier of commands like sh -c, or
// a redirect to a file), it lies behind a cd to a
// computed directory, or the workspace is unknown for a relative path —
// makes the command opaque. Relative paths are tried from the workspace
// and from every directory a literal cd may have reached.
//
// It reads the file system; evaluate calls it only when a Bash deny rule
// names a command.
func resolveFiles(sh *shellFacts, workdir string, denied []string) {
	for _, fr := range sh.files {
		if why := resolveFile(sh, fr, workdir, denied, 0); why != "" && sh.opaque == "" {
			sh.opaque = why
		}
	}
}

// maxScriptDepth bounds how deep scripts that run scripts are read.
const maxScriptDepth = 3

func resolveFile(sh *shellFacts, fr fileRun, workdir string, denied []string, depth int) string {
	for i, part := range sh.parts {
		if i != fr.part && !part.readOnly && !part.carrier {
			return "it runs " + fr.path + ", which another part of the same call may change first; run it in a call of its own"
		}
	}
	if sh.writes {
		return "it runs " + fr.path + " and writes a file in the same call, which may be that file; run it in a call of its own"
	}
	var candidates []string
	switch {
	case filepath.IsAbs(fr.path):
		candidates = []string{fr.path}
	case workdir == "":
		return "it runs " + fr.path + ", which cannot be identified without the workspace directory"
	case sh.cdUnknown:
		return "it runs " + fr.path + " after changing to a directory only known at run time"
	default:
		dirs := []string{workdir}
		prev := workdir
		for _, d := range sh.cds {
			if filepath.IsAbs(d) {
				prev = d
			} else {
				dirs = append(dirs, filepath.Join(workdir, d))
				prev = filepath.Join(prev, d)
			}
			dirs = append(dirs, prev)
		}
		for _, d := range dirs {
			candidates = append(candidates, filepath.Join(d, fr.path))
		}
	}
	found := false
	for _, c := range slices.Compact(candidates) {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		info, err := os.Stat(real)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		found = true
		args := fr.words[1:]
		if fr.script {
			args = nil
		}
		if !fr.script {
			if filepath.Base(real) != filepath.Base(c) {
				// A link (or a hard-linked name) stands for its target.
				sh.extra = append(sh.extra, append([]string{filepath.Base(real)}, args...))
			}
			if name := identifyBinary(real, info.Size(), denied); name != "" {
				sh.extra = append(sh.extra, append([]string{name}, args...))
				continue
			}
		}
		if why := readScript(sh, real, fr.script, workdir, denied, depth); why != "" {
			return why
		}
	}
	if !found {
		return "it runs " + fr.path + ", which does not exist before the call"
	}
	return ""
}

// readScript parses a shell script file and shows its commands, and those
// of the scripts and copies it runs by path, to deny rules. A file that is not a shell script (no #! naming a shell, when
// the file is run directly) is left alone: it is a program.
func readScript(sh *shellFacts, file string, byShell bool, workdir string, denied []string, depth int) string {
	f, err := os.Open(file)
	if err != nil {
		return "it runs " + file + ", which cannot be read"
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxScriptRead+1))
	if err != nil {
		return "it runs " + file + ", which cannot be read"
	}
	if !byShell && !shellShebang(b) {
		return ""
	}
	if len(b) > maxScriptRead {
		return "it runs the shell script " + file + ", which is too long to read"
	}
	sub := analyzeShell(string(b))
	if depth+1 < maxScriptDepth {
		// The scripts and programs it runs in turn, from the same
		// directory as the call (a script's relative paths are the
		// caller's); what cannot be identified there is left to exec time.
		for _, fr := range sub.files {
			resolveFile(sub, fr, workdir, denied, depth+1)
		}
	}
	for _, p := range sub.parts {
		sh.extra = append(sh.extra, p.words)
	}
	sh.extra = append(sh.extra, sub.extra...)
	sh.computed = append(sh.computed, sub.computed...)
	sh.binRefs = append(sh.binRefs, sub.binRefs...)
	return ""
}

// shellShebang reports a file starting with #! naming a shell.
func shellShebang(b []byte) bool {
	if !bytes.HasPrefix(b, []byte("#!")) {
		return false
	}
	line, _, _ := bytes.Cut(b[2:], []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return false
	}
	name := baseName(fields[0])
	if name == "env" && len(fields) > 1 {
		name = baseName(fields[len(fields)-1])
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
				name = baseName(f)
				break
			}
		}
	}
	return shells[name]
}

// binPrint is one system binary's size and content hash.
type binPrint struct {
	size int64
	sum  [sha256.Size]byte
	path string
}

// binPrints caches, per command name, the binaries of that name found in
// the system directories. The system directories do not change under a
// running service in a way that matters here; a stale entry only misses a
// copy, which exec-time enforcement still sees.
var binPrints sync.Map // name → []binPrint (sum filled lazily)

// binPrintMu keeps two calls from hashing the same binary at once.
var binPrintMu sync.Mutex

// systemBinaries returns the files named name in the system directories,
// symbolic links resolved, without duplicates.
func systemBinaries(name string) []binPrint {
	if v, ok := binPrints.Load(name); ok {
		return v.([]binPrint)
	}
	var out []binPrint
	dirs := make([]string, 0, len(systemDirs))
	for d := range systemDirs {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(filepath.Join(d, name))
		if err != nil {
			continue
		}
		info, err := os.Stat(real)
		if err != nil || !info.Mode().IsRegular() || slices.ContainsFunc(out, func(b binPrint) bool { return b.path == real }) {
			continue
		}
		out = append(out, binPrint{size: info.Size(), path: real})
	}
	binPrints.Store(name, out)
	return out
}

// identifyBinary returns the denied command whose system binary file is
// identical to file (of the given size), or "". When that binary is a
// multi-call one (/bin/rm a link to busybox), it returns the binary's own
// name: a copy of it runs the program its argv[0] names, not rm.
func identifyBinary(file string, size int64, denied []string) string {
	var sum *[sha256.Size]byte
	for _, name := range denied {
		for _, b := range systemBinaries(name) {
			if b.size != size {
				continue
			}
			id := name
			if own := filepath.Base(b.path); multiCall[own] {
				id = own
			}
			if b.path == file {
				return id
			}
			if sum == nil {
				s, err := fileSum(file)
				if err != nil {
					return ""
				}
				sum = &s
			}
			if bs, err := binSum(b.path); err == nil && bs == *sum {
				return id
			}
		}
	}
	return ""
}

var binSums sync.Map // path → [sha256.Size]byte

func binSum(path string) ([sha256.Size]byte, error) {
	if v, ok := binSums.Load(path); ok {
		return v.([sha256.Size]byte), nil
	}
	binPrintMu.Lock()
	defer binPrintMu.Unlock()
	s, err := fileSum(path)
	if err == nil {
		binSums.Store(path, s)
	}
	return s, err
}

func fileSum(path string) ([sha256.Size]byte, error) {
	var s [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return s, err
	}
	copy(s[:], h.Sum(nil))
	return s, nil
}
