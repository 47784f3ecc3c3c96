package policy

import "testing"

// TestCommandsThatRunCommandsAreNested: tools that execute other programs
// are nested execution, and close look-alikes that do not are not.
func TestCommandsThatRunCommandsAreNested(t *testing.T) {
	nested := []string{
		"sed e x", "sed '1e date' f", "sed 's/x/date/e' f", "sed -n 's/a/b/ep' f", "sed -e 'p' -e '2e id' f", "sed -f prog.sed f",
		"sed --expression='$e ls' f", "sed '/x/,/y/ { s/a/b/e }' f",
		"git grep -O foo", "git grep --open-files-in-pager=vim foo", "git grep -nO foo", "git grep --open-files foo", "git -C . grep -O x",
		"tar --to-command=sh -xf a.tar", "tar --to-command sh -xf a.tar", "tar --use-compress-program=x -cf a.tar .", "tar -I zstd -cf a .",
		"tar -cIzstd -f a .", "tar --checkpoint=1 --checkpoint-action=exec=sh -cf a .", "tar --checkpoint-action exec=id -cf a .",
		"tar -xf a.tar --to-com=sh", "tar xIf prog a.tar", "tar -F script -cf a .", "tar --info-script=x -cf a .",
		"find . -exec ls {} ;", "find . -execdir ls {} +", "find . -ok ls {} ;", "find . -okdir ls {} ;",
		"awk 'BEGIN{system(\"id\")}'", "gawk '{ system (\"id\") }' f", "awk '{ \"date\" | getline d }'", "awk '{ print | \"sort\" }' f",
		"awk '{print $1 |& \"cat\"}' f", "awk -f prog.awk f", "awk -e 'BEGIN{system(\"x\")}'", "awk --source 'BEGIN{system(\"x\")}'",
		"gawk -l ext 'BEGIN{}'", "gawk -i lib '{x()}'", "awk '@load \"x\"'",
		"git -c core.pager=evil log", "git -c alias.x='!rm -rf y' x", "git --config-env=core.pager=E log", "git difftool",
		"git rebase --exec 'make' main", "git rebase -x make main", "git log --ext-diff -p --exec=x",
		"less f", "more f", "vim -c '!id' f", "ex f", "ed f", "man -P 'sh -c id' ls", "m4 f", "dc f",
		"sort --compress-program=gzip f", "zip -T -TT 'sh -c id' a.zip f", "rsync -e 'sh -c id' a b:c", "ssh -o ProxyCommand=id h",
		"scp -S prog a b:c", "go test -exec 'sh -c id' ./...", "go build -toolexec x ./...", "go vet -vettool=x ./...", "go generate ./...",
		"strace ls", "chroot / ls", "unshare -r ls", "mapfile -C cb arr", "sqlite3 db '.shell id'", "at now",
		"printf -v 'a[$(id)]' x", "[ -v 'a[$(id)]' ]",
	}
	plain := []string{
		"sed s/a/b/ f", "sed -n '/x/p' f", "sed -i 's/e/f/g' f", "sed 's/e/E/' f", "sed --sandbox 's/a/date/e' f", "sed '/^e/d' f",
		"sed 'y/abc/xyz/' f", "sed -e '1i\\' -e 'e x' f", "git grep -n foo", "git grep -e -o x", "git log -p",
		"tar -xzf a.tgz", "tar -cf a.tar --exclude=x .", "tar xzf a.tgz", "tar -tvf a.tar",
		"find . -name '*.go'", "awk '{print $1}' f", "awk -F'|' '{print $2}' f", "awk '$1 > 3 { n++ } END { print n }' f",
		"awk '/a|b/ {print}' f", "awk '{ print \"a|b\" }' f", "awk '$1 || $2' f", "awk -v x=1 '{print x}' f", "gawk -i inplace '{print}' f",
		"sort -u f", "go test ./...", "go build ./...", "rsync -a a/ b/", "ssh h ls", "man ls", "zip -r a.zip .",
		"printf '%s\\n' x", "[ -f x ]", "mapfile arr < f",
	}
	for _, c := range nested {
		if f := analyzeShell(c); f.nested == "" {
			t.Errorf("%q: not nested", c)
		}
	}
	for _, c := range plain {
		if f := analyzeShell(c); f.nested != "" {
			t.Errorf("%q: nested (%s)", c, f.nested)
		}
	}
}

func TestSedScan(t *testing.T) {
	cases := []struct {
		script string
		execs  bool
		writes []string
		ok     bool
	}{
		{"s/a/b/g", false, nil, true},
		{"s/a/b/w out.txt", false, []string{"out.txt"}, true},
		{"w /tmp/x", false, []string{"/tmp/x"}, true},
		{"1,/x/{ s|a|b|; W log\n}", false, []string{"log"}, true},
		{"s/a\\/e/b/", false, nil, true},
		{"/e/!d;p", false, nil, true},
		{":a;N;$!ba;s/\\n/ /g", false, nil, true},
		{"a\\\nw text", false, nil, true},
		{"$e ls", true, nil, true},
		{"s/x/y/ge", true, nil, true},
		{"0~3 e echo", true, nil, true},
		{"s/x", false, nil, false},
		{"k", false, nil, false},
	}
	for _, c := range cases {
		p := scanSed(c.script)
		if p.execs != c.execs || p.ok != c.ok || len(p.writes) != len(c.writes) {
			t.Errorf("scanSed(%q) = %+v", c.script, p)
			continue
		}
		for i := range c.writes {
			if p.writes[i] != c.writes[i] {
				t.Errorf("scanSed(%q) writes %q, want %q", c.script, p.writes, c.writes)
			}
		}
	}
}
