package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"cronsheet/task"
	"cronsheet/tools/bench/internal/benchkit"
	"cronsheet/tools/bench/internal/node"
)

// lagCase submits n delayed POST jobs in batches, their due instants spread
// evenly over o.spread from a start the whole submission and arming should
// fit before; it waits until all are armed, measures the heap, then records
// every fire and callback.
func lagCase(o options, n int) (lagResult, error) {
	// Everything that grows with n is allocated before the heap is first
	// measured, so it does not count as the node's memory.
	l := &lagRun{o: o, n: n, fires: benchkit.NewRecorder(n)}
	h, err := startHook(n, nil)
	if err != nil {
		return lagResult{}, err
	}
	defer h.close()
	nd, err := startNode(o, "", node.Settings{
		OnFire: func(_ time.Time, lag time.Duration) { l.fires.Add(lag) },
		OnArm:  l.armed.observe,
		OnRun:  l.observeRun,
	})
	if err != nil {
		return lagResult{}, err
	}
	defer nd.close()
	l.h, l.nd, l.c = h, nd, newClient(o.clients)
	r, sample, err := l.submit()
	if err != nil {
		return lagResult{}, err
	}
	if err := l.drain(&r); err != nil {
		return lagResult{}, err
	}
	if err := l.collect(&r, sample); err != nil {
		return lagResult{}, err
	}
	return r, nil
}

// lagRun is one lag case under way: its node, its hook, and what the
// node's observers saw.
type lagRun struct {
	o                 options
	n                 int
	h                 *hook
	nd                *benchNode
	c                 *client
	fires             *benchkit.Recorder
	armed             arms
	finals, lastFinal atomic.Int64 // runs stored final; unix ns of the latest
	first             time.Time    // the first due instant
}

// observeRun is the node's run observer: it counts the runs stored final.
func (l *lagRun) observeRun(r task.Run) {
	if r.State.Final() {
		l.lastFinal.Store(time.Now().UnixNano())
		l.finals.Add(1)
	}
}

// submit sets the first due instant, submits the jobs in batches, waits
// until they are armed (or a second before the first due instant) and
// measures the heap; it returns the result so far and the first job id of
// each batch.
func (l *lagRun) submit() (lagResult, []string, error) {
	o, n := l.o, l.n
	sample := make([]string, 0, (n+o.batch-1)/o.batch)
	var sampleMu sync.Mutex
	heapBefore := benchkit.HeapBytes()

	budget := o.budget
	if budget <= 0 {
		budget = 15*time.Second + time.Duration(n)*3*time.Millisecond/2
	}
	l.first = time.Now().Add(budget)
	if o.wholeSeconds {
		l.first = l.first.Truncate(time.Second).Add(time.Second)
	}
	bodies := batchBodies(l.h.url, n, o.batch, l.first, o.spread, o.wholeSeconds)
	stopIntakeProfile, err := startProfile(o.intakeProfile, n)
	if err != nil {
		return lagResult{}, nil, err
	}
	start := time.Now()
	err = benchkit.Parallel(len(bodies), o.clients, func(i int) error {
		ids, err := submitBatch(l.c, l.nd.Base, bodies[i])
		if err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
		sampleMu.Lock()
		sample = append(sample, ids[0])
		sampleMu.Unlock()
		return nil
	})
	took := time.Since(start)
	stopIntakeProfile()
	bodies = nil // garbage before the heap is measured again
	if err != nil {
		return lagResult{}, nil, err
	}
	// The heap is measured at least a second before the first due
	// instant, once every job is armed (or as many as are by then).
	benchkit.WaitCount(l.armed.n.Load, int64(n), l.first.Add(-time.Second), 0)
	r := lagResult{intake: intakeResult{name: fmt.Sprintf("batches of %d", o.batch), n: n, clients: o.clients,
		perRequest: o.batch, took: took, armed: l.armed.since(start), armedN: l.armed.n.Load()}, budget: budget}
	if r.intake.armedN > 0 {
		r.heapPerJob = float64(int64(benchkit.HeapBytes())-int64(heapBefore)) / float64(r.intake.armedN)
	}
	if o.heapProfile != "" {
		if err := benchkit.WriteHeapProfile(fmt.Sprintf("%s-%d", o.heapProfile, n)); err != nil {
			return lagResult{}, nil, fmt.Errorf("heap profile: %w", err)
		}
	}
	benchkit.Progress("batches, %d jobs: submitted in %s, %d armed after %s, first due in %s", n, benchkit.Secs(took),
		r.intake.armedN, benchkit.Secs(r.intake.armed), benchkit.Secs(time.Until(l.first)))
	return r, sample, nil
}

// drain waits for the first due instant, then until every job is called
// back and its outcome stored, measuring the CPU used meanwhile (and, as
// the options ask, profiling it and dumping the goroutines).
func (l *lagRun) drain(r *lagResult) error {
	o, n, first := l.o, l.n, l.first
	time.Sleep(time.Until(first))
	r.armedBeforeDue = l.armed.n.Load()
	cpuAtDue := benchkit.CPUTime()
	stopProfile, err := startProfile(o.drainProfile, n)
	if err != nil {
		return err
	}
	defer stopProfile()

	// Every job should be called back soon after the end of the window; a
	// job not called back when callbacks have stopped for 30 s (or five
	// minutes after the window) is reported, not waited for.
	last := first.Add(o.spread)
	if o.goroutines != "" {
		at := o.spread / 2
		if o.goroutinesAt > 0 {
			at = o.goroutinesAt
		}
		time.Sleep(time.Until(first.Add(at)))
		if err := dumpGoroutines(fmt.Sprintf("%s-%d.txt", o.goroutines, n)); err != nil {
			return err
		}
	}
	time.Sleep(time.Until(last))
	if !benchkit.WaitCount(l.h.calls.Load, int64(n), last.Add(5*time.Minute), 30*time.Second) {
		benchkit.Progress("batches, %d jobs: only %d called back", n, l.h.calls.Load())
	}
	r.drainCPU = benchkit.CPUTime() - cpuAtDue
	stopProfile()
	benchkit.Progress("batches, %d jobs: the process used %s of CPU from the first due instant to the last callback (%s)",
		n, benchkit.Secs(r.drainCPU), benchkit.Secs(time.Since(first)))
	if !benchkit.WaitCount(l.finals.Load, int64(n), time.Now().Add(5*time.Minute), 30*time.Second) {
		benchkit.Progress("batches, %d jobs: only %d outcomes stored", n, l.finals.Load())
	}
	r.lastOutcomeAfterDue = time.Unix(0, l.lastFinal.Load()).Sub(first)
	benchkit.Progress("batches, %d jobs: the last outcome was stored %s after the first due instant (%.0f jobs/s)",
		n, benchkit.Secs(r.lastOutcomeAfterDue), float64(l.finals.Load())/r.lastOutcomeAfterDue.Seconds())
	return nil
}

// collect reads the sampled jobs back through the API and fills in the
// lags and counts the hook and the observers saw.
func (l *lagRun) collect(r *lagResult, sample []string) error {
	for _, id := range sample {
		var v struct {
			State string `json:"state"`
		}
		if err := l.c.do(http.MethodGet, l.nd.Base+"/api/v1/jobs/"+id, nil, http.StatusOK, &v); err != nil {
			return err
		}
		r.sampled++
		if v.State == "done" {
			r.sampledDone++
		}
	}
	h := l.h
	if b := h.bad.Load(); b > 0 {
		return fmt.Errorf("%d callbacks had no readable Idempotency-Key", b)
	}
	cs := h.received()
	r.fire, r.hook = l.fires.Dist(), benchkit.Distribution(callbackLags(cs))
	if l.o.callsCSV != "" {
		if err := writeCalls(fmt.Sprintf("%s-%d.csv", l.o.callsCSV, l.n), cs, l.first); err != nil {
			return err
		}
	}
	r.fires, r.calls, r.conns = l.fires.Len(), h.calls.Load(), h.conns.Load()
	r.callSpan = time.Duration(h.last.Load() - h.first.Load())
	r.lastAfterDue = time.Unix(0, h.last.Load()).Sub(l.first)
	r.intake.errors = l.nd.errors.Load()
	return nil
}

// batchBodies encodes n POST jobs to url in batches of size: job i is due
// at first + spread·i/n (millisecond precision, as due_at keeps it; whole
// seconds when whole, first being one).
func batchBodies(url string, n, size int, first time.Time, spread time.Duration, whole bool) [][]byte {
	due := func(i int) time.Time {
		d := first.Add(spread * time.Duration(i) / time.Duration(n)).Truncate(time.Millisecond)
		if whole {
			d = d.Truncate(time.Second)
		}
		return d
	}
	var out [][]byte
	for lo := 0; lo < n; lo += size {
		out = append(out, jobsBody(url, lo, min(lo+size, n), due))
	}
	return out
}

// jobsBody encodes jobs lo..hi-1 as one batch: POST jobs to url, job i due
// at due(i) (which should be of millisecond precision, as due_at keeps it).
func jobsBody(url string, lo, hi int, due func(i int) time.Time) []byte {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := lo; i < hi; i++ {
		if i > lo {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"method":"POST","name":%q,"params":"{\"i\":%d}","at":%q}`, url, i, due(i).UTC().Format(time.RFC3339Nano))
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// submitBatch POSTs a batch body to the node at base and returns the ids
// of its jobs, in order; a job of it refused is an error.
func submitBatch(c *client, base string, body []byte) ([]string, error) {
	var items []struct {
		Job *struct {
			ID string `json:"id"`
		} `json:"job"`
		Error string `json:"error"`
	}
	if err := c.do(http.MethodPost, base+"/api/v1/jobs", body, http.StatusOK, &items); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("the batch was answered with no items")
	}
	ids := make([]string, len(items))
	for i, it := range items {
		if it.Job == nil {
			return nil, fmt.Errorf("job %d of the batch was refused: %s", i, it.Error)
		}
		ids[i] = it.Job.ID
	}
	return ids, nil
}

// startProfile starts a CPU profile into <file>-<n> and returns what stops
// it; without a file it does nothing.
func startProfile(file string, n int) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	return benchkit.StartCPUProfile(fmt.Sprintf("%s-%d", file, n))
}
