package main

import (
	"fmt"
	"io"
	"sync"
)

// console prints the narrative and one progress line. On a terminal the
// progress line is redrawn in place (\r) and narrative lines are printed
// above it; otherwise each progress update is a plain line of its own.
type console struct {
	w   io.Writer
	tty bool

	mu     sync.Mutex
	status string // the progress line on screen (terminal only)
}

const clearLine = "\r\033[K"

func (c *console) say(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tty && c.status != "" {
		fmt.Fprint(c.w, clearLine)
	}
	fmt.Fprintf(c.w, format+"\n", args...)
	if c.tty && c.status != "" {
		fmt.Fprint(c.w, c.status)
	}
}

func (c *console) progress(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.tty {
		fmt.Fprintln(c.w, line)
		return
	}
	c.status = line
	fmt.Fprint(c.w, clearLine+line)
}

// endProgress removes the progress line.
func (c *console) endProgress() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tty && c.status != "" {
		fmt.Fprint(c.w, clearLine)
	}
	c.status = ""
}
