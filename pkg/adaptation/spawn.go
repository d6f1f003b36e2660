package adaptation

import "sync"

// spawn runs f in a new goroutine that wg waits for. It is what
// sync.WaitGroup.Go does, which needs Go 1.25: this module keeps upstream's
// go 1.24.0 directive, so runtimes that vendor it need no newer toolchain.
func spawn(wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		f()
	}()
}
