package main

import (
	"fmt"
	"io"
	"sync"
)

// printer writes whole lines from concurrent handlers without interleaving.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func newPrinter(w io.Writer) *printer { return &printer{w: w} }

func (p *printer) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}
