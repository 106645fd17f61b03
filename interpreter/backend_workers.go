package interpreter

import "sync"

// Executions run on pooled goroutines rather than a new goroutine each: a
// goroutine whose stack grew while running a program (custom calls into
// Go code run deep) gives the grown stack back when it exits, so the next
// new goroutine has to allocate one again; a pooled goroutine keeps it
// (the garbage collector still shrinks idle stacks). Up to maxIdleWorkers
// wait for work; beyond that a worker exits when its work is done.

const maxIdleWorkers = 256

type worker struct{ work chan func() }

var execWorkers struct {
	mu   sync.Mutex
	idle []*worker
}

// goWork runs f on an idle pooled goroutine, or a new one.
func goWork(f func()) {
	execWorkers.mu.Lock()
	if n := len(execWorkers.idle); n > 0 {
		w := execWorkers.idle[n-1]
		execWorkers.idle[n-1] = nil
		execWorkers.idle = execWorkers.idle[:n-1]
		execWorkers.mu.Unlock()
		w.work <- f
		return
	}
	execWorkers.mu.Unlock()
	w := &worker{work: make(chan func(), 1)}
	w.work <- f
	go w.loop()
}

func (w *worker) loop() {
	for f := range w.work {
		f()
		execWorkers.mu.Lock()
		if len(execWorkers.idle) >= maxIdleWorkers {
			execWorkers.mu.Unlock()
			return
		}
		execWorkers.idle = append(execWorkers.idle, w)
		execWorkers.mu.Unlock()
	}
}
