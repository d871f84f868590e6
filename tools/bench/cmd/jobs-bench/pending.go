package main

// The pending case (-pending N) measures one node holding many pending
// jobs: the memory they take, the fire lag of a steady due stream while
// they wait, and how soon a restarted node has the arming window armed
// again (the aims, and the figures against them, are in
// docs/BENCHMARKS.md). On one node with the default arming window
// (fire.arm_window 2m):
//
//  1. N jobs are submitted in batches, each due at its own instant spread
//     over 1 h to 3 h ahead, so every one waits in the store (the jobs
//     API defers their arming to a window before their time); the case
//     counts the arms for parkedSettle after the submission.
//  2. Heap (HeapAlloc after a GC), RSS (VmRSS) and the SQLite file are
//     measured before the submission and after that settle.
//  3. A due stream: -pending-rate jobs a second for -pending-for, in one
//     batch every streamTick, each job due streamLead after its planned
//     submission (inside the window); fire lag (due → fire start) and
//     callback lag (due → arrival at the hook) over its jobs only.
//  4. windowJobs more jobs are submitted, due 60–90 s later; once they
//     are armed the node is stopped gracefully, and a new node on the same
//     SQLite file is timed from its start until those are armed (the
//     window armed); its arms are counted for restartSettle more (the jobs
//     due beyond the window stay in the store until their time).
//
// The whole case must end within the hour, before the first parked job is
// due.

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cronsheet/task"
	"cronsheet/tools/bench/internal/benchkit"
	"cronsheet/tools/bench/internal/jobsjson"
	"cronsheet/tools/bench/internal/node"
)

const (
	// parkedFrom and parkedOver place the N parked jobs: due from
	// parkedFrom ahead, evenly over parkedOver, each at its own
	// millisecond.
	parkedFrom = time.Hour
	parkedOver = 2 * time.Hour
	// maxPending keeps every parked job at a distinct millisecond.
	maxPending = int(parkedOver / time.Millisecond)
	// streamTick is how often the due stream sends a batch; streamLead is
	// how long after its planned submission a stream job is due.
	streamTick = 100 * time.Millisecond
	streamLead = 4 * time.Second
	// parkedSettle is how long the node is watched after the submission,
	// for arms.
	parkedSettle = 5 * time.Second
	// restartSettle is how long the restarted node is watched after the
	// window is armed, for any further arms.
	restartSettle = 5 * time.Second
	// windowJobs are submitted just before the restart, due windowFrom to
	// windowFrom+windowOver later: what "the window armed" waits for.
	windowJobs = 1000
	windowFrom = 60 * time.Second
	windowOver = 30 * time.Second
	// armWait bounds each wait for arming; a count that has not moved for
	// armStall ends it sooner.
	armWait  = 30 * time.Minute
	armStall = time.Minute
	// registryWait bounds the retries of a restarted node refused because
	// its id is still registered (the entry lapses after patrol.lease, 1m
	// here); registryRetry is the time between them.
	registryWait  = 2 * time.Minute
	registryRetry = time.Second
)

// checkPending checks the pending case's flags.
func checkPending(o options) error {
	if o.pending < 0 || o.pending > maxPending {
		return fmt.Errorf("-pending must be 0..%d (each parked job at its own millisecond)", maxPending)
	}
	if o.pending == 0 {
		return nil
	}
	if perTick := float64(o.pendingRate) * streamTick.Seconds(); o.pendingRate < 1 || perTick > 1000 {
		return fmt.Errorf("-pending-rate must be 1..%d jobs/s (one batch of at most 1000 every %s)",
			int(1000/streamTick.Seconds()), streamTick)
	}
	if o.pendingFor < time.Second {
		return errors.New("-pending-for must be at least 1s")
	}
	return nil
}

// pendingResult is what the pending case measured.
type pendingResult struct {
	n          int
	submitTook time.Duration // first batch sent → last answer read
	armedAfter time.Duration // first batch sent → the latest arm
	armedN     int64         // arms seen when the wait ended
	// heap (after a GC) and RSS, in bytes, before the submission and once
	// the settle after the submission; the SQLite file and its WAL then.
	heapBefore, heapAfter uint64
	rssBefore, rssAfter   int64
	dbBytes, walBytes     int64

	stream     streamResult
	fire, hook benchkit.Dist // the stream's jobs only
	fires      int           // the stream's fires observed
	calls      int64

	stopTook    time.Duration // the graceful stop of the first node
	startTook   time.Duration // the new node's first start → node.Start returned (store opened, listening)
	refused     int           // starts refused first because the stopped node's id was still registered
	firstArm    time.Duration // the new node's first start → its first arm
	windowArmed time.Duration // the new node's start → all windowJobs armed; 0: not all were
	windowN     int           // window jobs armed by the new node, or called back
	windowLate  int64         // of those, called back before an arm was seen: they came due first
	allArmed    time.Duration // the new node's start → its latest arm
	rearmedN    int64         // arms the new node made by then
	peakRSS     int64         // VmHWM at the end
	errors      int64         // errors both nodes logged
}

// heapPerJob is the heap growth per armed job.
func (r pendingResult) heapPerJob() float64 {
	if r.armedN == 0 {
		return 0
	}
	return float64(int64(r.heapAfter)-int64(r.heapBefore)) / float64(r.armedN)
}

// runPending runs the pending case and prints its table.
func runPending(o options) error {
	r, err := pendingCase(o)
	if err != nil {
		return fmt.Errorf("pending, %d jobs: %w", o.pending, err)
	}
	if o.jsonOut != "" {
		if err := writeJSON(o, nil, nil, &r); err != nil {
			return err
		}
	}
	printPending(r)
	return nil
}

// pendingCase runs the four steps of the case on two nodes, one after the
// other, on the same SQLite file.
func pendingCase(o options) (pendingResult, error) {
	r := pendingResult{n: o.pending}
	streamN := int(float64(o.pendingRate) * o.pendingFor.Seconds())
	// Everything that grows with the stream is allocated before the heap
	// is first measured; nothing kept grows with N.
	fires := benchkit.NewRecorder(streamN)
	w := &armWatch{} // the new node's arms, and the window jobs
	h, err := startHook(streamN+windowJobs, w.called)
	if err != nil {
		return r, err
	}
	defer h.close()
	var armed arms
	var finals atomic.Int64
	first := time.Now().Add(parkedFrom) // the first parked job's due instant
	nd, err := startNode(o, "", node.Settings{
		OnFire: func(slot time.Time, lag time.Duration) {
			if slot.Before(first) { // the stream's, not a parked job's
				fires.Add(lag)
			}
		},
		OnArm: armed.observe,
		OnRun: func(run task.Run) {
			if run.State.Final() {
				finals.Add(1)
			}
		},
	})
	if err != nil {
		return r, err
	}
	defer nd.close()
	c := newClient(o.clients)

	r.heapBefore, r.rssBefore = benchkit.HeapBytes(), procStatus("VmRSS")
	if err := submitParked(&r, o, c, nd, h.url, first, &armed); err != nil {
		return r, err
	}
	r.heapAfter, r.rssAfter = benchkit.HeapBytes(), procStatus("VmRSS")
	r.dbBytes, r.walBytes = fileSize(filepath.Join(nd.Dir, node.DBFile)), fileSize(filepath.Join(nd.Dir, node.DBFile+"-wal"))
	benchkit.Progress("pending, %d jobs: heap %+.1f MiB, RSS %+.1f MiB; streaming %d jobs/s for %s",
		r.n, mib(float64(int64(r.heapAfter)-int64(r.heapBefore))), mib(float64(r.rssAfter-r.rssBefore)), o.pendingRate, o.pendingFor)

	if r.stream, err = dueStream(c, nd.Base, h.url, o.pendingRate, o.pendingFor, o.clients); err != nil {
		return r, fmt.Errorf("due stream: %w", err)
	}
	last := r.stream.start.Add(o.pendingFor + streamLead)
	time.Sleep(time.Until(last))
	if !benchkit.WaitCount(h.calls.Load, int64(r.stream.n), last.Add(5*time.Minute), 30*time.Second) {
		benchkit.Progress("pending, %d jobs: only %d of %d stream jobs called back", r.n, h.calls.Load(), r.stream.n)
	}
	if !benchkit.WaitCount(finals.Load, int64(r.stream.n), time.Now().Add(5*time.Minute), 30*time.Second) {
		benchkit.Progress("pending, %d jobs: only %d of %d stream outcomes stored", r.n, finals.Load(), r.stream.n)
	}
	if b := h.bad.Load(); b > 0 {
		return r, fmt.Errorf("%d callbacks had no readable Idempotency-Key", b)
	}
	r.fire, r.fires = fires.Dist(), fires.Len()
	r.hook, r.calls = benchkit.Distribution(callbackLags(h.received())), h.calls.Load()
	benchkit.Progress("pending, %d jobs: stream fire lag p99 %s, callback lag p99 %s; restarting", r.n, benchkit.MS(r.fire.P99), benchkit.MS(r.hook.P99))

	if err := restart(&r, o, c, nd, h.url, &armed, w); err != nil {
		return r, fmt.Errorf("restart: %w", err)
	}
	r.peakRSS = procStatus("VmHWM")
	return r, nil
}

// submitParked submits r.n jobs in batches of o.batch from o.clients
// clients, job i due at first + parkedOver·i/n, and counts the arms over
// parkedSettle more: the jobs API stores jobs due that far ahead to be
// claimed a window before their time, so no node arms them now (0 arms
// expected). Each batch is encoded as it is sent,
// so that no body outlives it.
func submitParked(r *pendingResult, o options, c *client, nd *benchNode, url string, first time.Time, armed *arms) error {
	due := func(i int) time.Time {
		return first.Add(parkedOver * time.Duration(i) / time.Duration(r.n)).Truncate(time.Millisecond)
	}
	batches := (r.n + o.batch - 1) / o.batch
	start := time.Now()
	err := benchkit.Parallel(batches, o.clients, func(b int) error {
		lo := b * o.batch
		if _, err := submitBatch(c, nd.Base, jobsBody(url, lo, min(lo+o.batch, r.n), due)); err != nil {
			return fmt.Errorf("batch %d: %w", b, err)
		}
		return nil
	})
	r.submitTook = time.Since(start)
	if err != nil {
		return err
	}
	benchkit.Progress("pending, %d jobs: submitted in %s (%.0f/s), %d armed", r.n, benchkit.Secs(r.submitTook),
		float64(r.n)/r.submitTook.Seconds(), armed.n.Load())
	time.Sleep(parkedSettle)
	r.armedAfter, r.armedN = armed.since(start), armed.n.Load()
	return nil
}

// streamResult is what the due stream submitted.
type streamResult struct {
	start time.Time     // the first job's planned submission
	rate  int           // jobs a second
	d     time.Duration // how long it ran
	n     int           // jobs submitted
	// late counts the jobs whose batch was answered less than a second
	// before their due instant (the stream fell behind).
	late int64
}

// dueStream submits rate jobs a second to the node at base for d: one
// batch every streamTick, job j planned at start + d·j/n and due
// streamLead after that, each batch sent by one of at most clients
// concurrent senders (when all are busy the stream waits, and falls
// behind).
func dueStream(c *client, base, url string, rate int, d time.Duration, clients int) (streamResult, error) {
	n := int(float64(rate) * d.Seconds())
	ticks := int((d + streamTick - 1) / streamTick)
	s := streamResult{start: time.Now().Add(streamTick).Truncate(time.Millisecond), rate: rate, d: d, n: n}
	planned := func(j int) time.Time { return s.start.Add(d * time.Duration(j) / time.Duration(n)) }
	due := func(j int) time.Time { return planned(j).Add(streamLead).Truncate(time.Millisecond) }
	var late atomic.Int64
	var failed error
	var failMu sync.Mutex
	sem := make(chan struct{}, clients)
	var wg sync.WaitGroup
	for k := range ticks {
		lo, hi := k*n/ticks, (k+1)*n/ticks
		if lo == hi {
			continue
		}
		time.Sleep(time.Until(planned(lo)))
		sem <- struct{}{}
		failMu.Lock()
		stop := failed != nil
		failMu.Unlock()
		if stop {
			<-sem
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			_, err := submitBatch(c, base, jobsBody(url, lo, hi, due))
			if err != nil {
				failMu.Lock()
				failed = cmp.Or(failed, fmt.Errorf("tick %d: %w", k, err))
				failMu.Unlock()
				return
			}
			for j := lo; j < hi; j++ {
				if time.Until(due(j)) < time.Second {
					late.Add(1)
				}
			}
		})
	}
	wg.Wait()
	s.late = late.Load()
	return s, failed
}

// restart submits windowJobs jobs to url due windowFrom..windowFrom+windowOver
// ahead, waits until nd (whose arms are armed) has armed them, stops nd
// gracefully, starts a new node on its SQLite file and times it arming
// those, then every pending job (r.n + windowJobs); the new node is
// closed (and the files removed) before it returns.
func restart(r *pendingResult, o options, c *client, nd *benchNode, url string, armed *arms, w *armWatch) error {
	before := armed.n.Load()
	seeded := time.Now()
	due := func(i int) time.Time {
		return seeded.Add(windowFrom + windowOver*time.Duration(i)/windowJobs).Truncate(time.Millisecond)
	}
	for lo := 0; lo < windowJobs; lo += o.batch {
		ids, err := submitBatch(c, nd.Base, jobsBody(url, lo, min(lo+o.batch, windowJobs), due))
		if err != nil {
			return fmt.Errorf("window jobs: %w", err)
		}
		w.expect(ids)
	}
	if !benchkit.WaitCount(armed.n.Load, before+windowJobs, time.Now().Add(armWait), armStall) {
		benchkit.Progress("pending, %d jobs: only %d of %d window jobs armed before the stop", r.n, armed.n.Load()-before, windowJobs)
	}
	stopping := time.Now()
	if err := nd.Stop(); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	r.stopTook = time.Since(stopping)
	r.errors = nd.errors.Load()
	benchkit.Progress("pending, %d jobs: %d window jobs submitted, node stopped in %s", r.n, windowJobs, benchkit.Secs(r.stopTook))

	started := time.Now()
	again, err := restartNode(r, o, nd.Dir, w)
	if err != nil {
		return fmt.Errorf("start again: %w", err)
	}
	defer again.close()
	r.startTook = time.Since(started)
	// The jobs due beyond the window were handed back to the store
	// (server's armer, Shed): the new node arms the window's jobs and
	// leaves those until their time. Wait for the window, then settle.
	window := func() int64 { return int64(windowJobs - w.remaining()) }
	if !benchkit.WaitCount(window, windowJobs, time.Now().Add(armWait), armStall) {
		benchkit.Progress("pending, %d jobs: the new node armed only %d of the %d window jobs", r.n, window(), windowJobs)
	}
	time.Sleep(restartSettle)
	r.rearmedN, r.windowLate = w.n.Load(), w.late.Load()
	r.allArmed = max(w.since(started), time.Unix(0, w.lastLate.Load()).Sub(started))
	if at := w.first.Load(); at != 0 {
		r.firstArm = time.Unix(0, at).Sub(started)
	}
	r.windowN = windowJobs - w.remaining()
	if at := w.done.Load(); at != 0 {
		r.windowArmed = time.Unix(0, at).Sub(started)
	}
	r.errors += again.errors.Load()
	return nil
}

// restartNode starts a node in dir reporting its arms to w. A stop that
// ran out of time leaves the node id registered, and a node of that id is
// refused until the entry lapses (patrol.lease): such a start is retried
// every registryRetry, for at most registryWait, each refusal counted in
// r.refused.
func restartNode(r *pendingResult, o options, dir string, w *armWatch) (*benchNode, error) {
	deadline := time.Now().Add(registryWait)
	for {
		nd, err := startNode(o, dir, node.Settings{OnArm: w.observe})
		if err == nil || !errors.Is(err, task.ErrConflict) || time.Now().After(deadline) {
			return nd, err
		}
		if r.refused == 0 {
			benchkit.Progress("pending, %d jobs: the new node was refused (%v); retrying every %s", r.n, err, registryRetry)
		}
		r.refused++
		time.Sleep(registryRetry)
	}
}

// armWatch counts a node's arms, as arms does, and keeps when the last of
// a set of jobs (the window jobs) was armed. A job of the set that came due
// before it was armed fires as it is armed, unseen by the arm observer; its
// callback reaching the hook (called) counts it, as late.
type armWatch struct {
	arms
	first    atomic.Int64 // unix nanoseconds of the first arm
	late     atomic.Int64 // jobs of the set called back before an arm was seen
	lastLate atomic.Int64 // unix nanoseconds of the latest of those
	mu       sync.Mutex
	left     map[string]bool // the set's jobs neither armed nor called back yet
	done     atomic.Int64    // unix nanoseconds when left emptied
}

// expect adds ids to the set.
func (w *armWatch) expect(ids []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.left == nil {
		w.left = map[string]bool{}
	}
	for _, id := range ids {
		w.left[id] = true
	}
}

// called hears a callback of job id at the hook.
func (w *armWatch) called(id string) {
	if w.take(id) {
		w.late.Add(1)
		w.lastLate.Store(time.Now().UnixNano())
	}
}

// take removes id from the set, if it is there (true), noting when the
// set emptied.
func (w *armWatch) take(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.left[id] {
		return false
	}
	delete(w.left, id)
	if len(w.left) == 0 {
		w.done.Store(time.Now().UnixNano())
	}
	return true
}

// observe is the new node's arm observer.
func (w *armWatch) observe(id string) {
	w.arms.observe(id)
	w.first.CompareAndSwap(0, time.Now().UnixNano())
	w.take(id)
}

// remaining is how many of the set are neither armed nor called back yet.
func (w *armWatch) remaining() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.left)
}

// printPending prints the case's table and what it leaves out.
func printPending(r pendingResult) {
	all := fmt.Sprintf("%d", r.armedN)
	if r.armedN > 0 {
		all += fmt.Sprintf(" (latest %s after the first batch)", benchkit.Secs(r.armedAfter))
	}
	window := benchkit.Secs(r.windowArmed)
	if r.windowArmed == 0 {
		window = fmt.Sprintf("never (%d of %d)", r.windowN, windowJobs)
	}
	if r.windowLate > 0 {
		window += fmt.Sprintf(", %d came due first", r.windowLate)
	}
	rearmed := fmt.Sprintf("%d of %d (latest after %s)", r.rearmedN+r.windowLate, r.n+windowJobs, benchkit.Secs(r.allArmed))
	fmt.Printf("| pending jobs | submit/s | armed by %s after | heap/pending job | RSS growth | db size | stream | "+
		"fire lag p50 | p99 | max | callback lag p50 | p99 | max | restart → window armed | armed by the new node |\n", benchkit.Secs(parkedSettle))
	fmt.Printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Printf("| %d | %.0f | %s | %s | %.1f MiB | %.1f MiB | %d/s for %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
		r.n, float64(r.n)/r.submitTook.Seconds(), all, benchkit.KiB(r.heapPerJob()), mib(float64(r.rssAfter-r.rssBefore)),
		mib(float64(r.dbBytes+r.walBytes)), r.stream.rate, benchkit.Secs(r.stream.d), benchkit.MS(r.fire.P50), benchkit.MS(r.fire.P99), benchkit.MS(r.fire.Max),
		benchkit.MS(r.hook.P50), benchkit.MS(r.hook.P99), benchkit.MS(r.hook.Max), window, rearmed)
	fmt.Println()
	fmt.Printf("- fire lag: a stream job's due instant → its fire starts (server.WithFireObserver); callback lag: "+
		"due instant → the callback reaches the hook. Both over the stream's jobs only: %d submitted in batches every %s, "+
		"each due %s after its planned submission; %d fires observed, %d callbacks; %d jobs accepted less than 1 s before due.\n",
		r.stream.n, streamTick, streamLead, r.fires, r.calls, r.stream.late)
	fmt.Printf("- the %d jobs due %s–%s ahead, each at its own millisecond: submitted in %s; heap %.1f → %.1f MiB, "+
		"RSS %.1f → %.1f MiB (peak %.1f MiB over the run); db size: SQLite file %.1f MiB + WAL %.1f MiB.\n",
		r.n, parkedFrom, parkedFrom+parkedOver, benchkit.Secs(r.submitTook), mib(float64(r.heapBefore)), mib(float64(r.heapAfter)),
		mib(float64(r.rssBefore)), mib(float64(r.rssAfter)), mib(float64(r.peakRSS)), mib(float64(r.dbBytes)), mib(float64(r.walBytes)))
	fmt.Printf("- restart: %d more jobs submitted (the last inserted) and armed just before it, due %s–%s after; "+
		"the graceful stop took %s. Timed from the first start of a new node on the same file, right after the stop "+
		"(it was up, store opened and listening, after %s, %d starts refused first as the node id was still registered; first arm after %s): "+
		"window armed = the last of those %d armed (or, for one that came due before it was armed and so fired as it was armed, "+
		"called back); armed by the new node = its arms and such late fires by %s after the window was armed "+
		"(%d and %d, of %d pending jobs; the jobs due beyond the window stay in the store, held by no node, until a window before their time).\n",
		windowJobs, windowFrom, windowFrom+windowOver, benchkit.Secs(r.stopTook), benchkit.Secs(r.startTook), r.refused, benchkit.Secs(r.firstArm), windowJobs,
		benchkit.Secs(restartSettle), r.rearmedN, r.windowLate, r.n+windowJobs)
	if r.errors > 0 {
		fmt.Printf("- the nodes logged %d errors (the first ones are on stderr).\n", r.errors)
	}
}

// procStatus returns a field of /proc/self/status given in kB (VmRSS,
// VmHWM), in bytes; 0 when it cannot be read.
func procStatus(field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		rest, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// fileSize returns the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func mib(b float64) float64 { return b / (1 << 20) }

// json returns r as -json writes it.
func (r pendingResult) json() jobsjson.Pending {
	msf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return jobsjson.Pending{N: r.n, SubmittedPS: float64(r.n) / r.submitTook.Seconds(), ArmedAfterS: r.armedAfter.Seconds(),
		Armed: r.armedN, HeapPerJob: r.heapPerJob(), HeapBefore: r.heapBefore, HeapAfter: r.heapAfter,
		RSSBefore: r.rssBefore, RSSAfter: r.rssAfter, PeakRSS: r.peakRSS, DBBytes: r.dbBytes, WALBytes: r.walBytes,
		StreamJobs: r.stream.n, StreamPS: r.stream.rate, StreamLate: r.stream.late,
		FireP50MS: msf(r.fire.P50), FireP99MS: msf(r.fire.P99), FireMaxMS: msf(r.fire.Max),
		CallbackP50MS: msf(r.hook.P50), CallbackP99MS: msf(r.hook.P99), CallbackMaxMS: msf(r.hook.Max),
		Fires: r.fires, Calls: r.calls, StopS: r.stopTook.Seconds(), RestartUpS: r.startTook.Seconds(), Refused: r.refused, FirstArmS: r.firstArm.Seconds(), WindowArmedS: r.windowArmed.Seconds(),
		WindowArmed: r.windowN, AllArmedS: r.allArmed.Seconds(), Rearmed: r.rearmedN, Errors: r.errors}
}
