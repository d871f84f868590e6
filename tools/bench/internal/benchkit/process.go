package benchkit

import (
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

// HeapBytes returns the live Go heap after a full collection.
func HeapBytes() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// CPUTime returns the CPU time (user + system) this process has used; 0
// when it cannot be read.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// StartCPUProfile starts a CPU profile into the file at path and returns
// what stops it and closes the file (once, however often it is called);
// with path "" it does nothing. Only one profile can run at a time in a
// process.
func StartCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return sync.OnceFunc(func() { pprof.StopCPUProfile(); f.Close() }), nil
}

// WriteHeapProfile writes the live heap's profile (after a full
// collection, so it shows what is retained) to path; an empty path writes
// nothing.
func WriteHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// StartBlockProfile records where goroutines wait (channel operations,
// select, sync primitives) and which mutexes are contended, from now until
// the returned stop, which writes them to path+".block" and path+".mutex".
// An empty path records nothing.
func StartBlockProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	runtime.SetBlockProfileRate(10_000) // one event per 10 µs waited, on average
	runtime.SetMutexProfileFraction(10)
	return sync.OnceFunc(func() {
		for _, name := range []string{"block", "mutex"} {
			f, ferr := os.Create(path + "." + name)
			if ferr != nil {
				Progress("%s profile: %v", name, ferr)
				continue
			}
			if werr := pprof.Lookup(name).WriteTo(f, 0); werr != nil {
				Progress("%s profile: %v", name, werr)
			}
			f.Close()
		}
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
	}), nil
}
