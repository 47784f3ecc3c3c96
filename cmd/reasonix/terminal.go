package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// isTerminal reports whether w is a character device (a terminal), not a
// file, pipe or buffer: only a person at a terminal gets colour and a
// status line that redraws itself.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// style decides how text is decorated on one output stream.
type style struct{ color bool }

// styleFor colours w's output when it is a terminal and NO_COLOR
// (https://no-color.org) is not set to a non-empty value.
func styleFor(w io.Writer) style {
	return style{color: isTerminal(w) && os.Getenv("NO_COLOR") == ""}
}

func (s style) paint(code, text string) string {
	if !s.color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) red(t string) string    { return s.paint("31", t) }
func (s style) green(t string) string  { return s.paint("32", t) }
func (s style) yellow(t string) string { return s.paint("33", t) }
func (s style) cyan(t string) string   { return s.paint("36", t) }
func (s style) bold(t string) string   { return s.paint("1", t) }
func (s style) dim(t string) string    { return s.paint("2", t) }

// liveStatus is the last line of a terminal: elapsed time and the current
// step, redrawn every second and kept below the lines printed above it.
// When off (not a terminal) it prints lines and nothing else. A nil
// *liveStatus ignores set and pause.
type liveStatus struct {
	mu     sync.Mutex
	w      io.Writer
	st     style
	on     bool
	active bool // drawn only between set and pause
	start  time.Time
	step   string
	shown  bool
	stop   chan struct{}
	done   chan struct{}
}

var (
	runStatusOnce sync.Once
	runStatusLine *liveStatus
)

// runStatus is the status line of `reasonix run` on w, shared by the run's
// progress and its sub-agents' (one terminal, one status line); nil unless
// w is a terminal. It is also nil when stdout is a terminal: the answer
// streams there mid-line, and redrawing the status line would erase it.
func runStatus(w io.Writer) *liveStatus {
	if !isTerminal(w) || isTerminal(os.Stdout) {
		return nil
	}
	runStatusOnce.Do(func() { runStatusLine = newLiveStatus(w, styleFor(w), true) })
	return runStatusLine
}

// newLiveStatus starts a status line on w when on; close stops it.
func newLiveStatus(w io.Writer, st style, on bool) *liveStatus {
	l := &liveStatus{w: w, st: st, on: on, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if !on {
		close(l.done)
		return l
	}
	go func() {
		defer close(l.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.mu.Lock()
				l.draw()
				l.mu.Unlock()
			}
		}
	}()
	return l
}

// println prints line above the status line.
func (l *liveStatus) println(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	fmt.Fprintln(l.w, line)
	l.draw()
}

// set changes the current step the status line shows, and shows it.
func (l *liveStatus) set(step string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.step, l.active = step, true
	l.draw()
}

// pause removes the status line until the next set: between a goal's
// turns and before a summary, which is written around it.
func (l *liveStatus) pause() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	l.active = false
}

// close removes the status line; later output starts on a clean line.
func (l *liveStatus) close() {
	if l.on {
		close(l.stop)
	}
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	l.on = false
}

func (l *liveStatus) clear() {
	if l.shown {
		io.WriteString(l.w, "\r\x1b[K")
		l.shown = false
	}
}

func (l *liveStatus) draw() {
	if !l.on || !l.active {
		return
	}
	l.clear()
	text := fmt.Sprintf("%s", time.Since(l.start).Round(time.Second))
	if l.step != "" {
		text += " · " + l.step
	}
	io.WriteString(l.w, l.st.dim(truncate(text, 100)))
	l.shown = true
}
