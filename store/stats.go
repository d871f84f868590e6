package store

import (
	"context"
	"slices"
	"time"

	"cronsheet/task"
)

// RunStats are the aggregate reads of the status page and the table: fires
// over time from the runs ledger, the upcoming fires of armed tasks, and
// each task's latest outcomes. store/storetest.RunControl covers them.
type RunStats interface {
	// FireStats counts the runs fired in [p.From, p.To) per bucket of
	// p.Bucket (see FireBucket for what counts), reading at most
	// MaxStatsRuns runs newest first; past that the answer is Truncated
	// and the oldest buckets are short. Params outside the bounds of
	// FireStatsParams.Check are task.ErrInvalid.
	FireStats(ctx context.Context, p FireStatsParams) (*FireStats, error)
	// UpcomingFires returns the enabled, undone, not deleted tasks whose
	// next fire is in (from, to], soonest first (then by task id), at
	// most limit (1..MaxUpcoming).
	UpcomingFires(ctx context.Context, from, to time.Time, limit int) ([]UpcomingFire, error)
	// RecentOutcomes returns, for each of taskIDs (at most
	// MaxOutcomeTasks), its newest perTask (1..MaxOutcomesPerTask)
	// finished runs (task.RunState.Final), newest first by (fired_at,
	// trigger_id). A task without finished runs is absent from the map.
	RecentOutcomes(ctx context.Context, taskIDs []string, perTask int) (map[string][]Outcome, error)
}

// Bounds of the RunStats reads.
const (
	// MaxStatsBuckets bounds FireStatsParams' (To-From)/Bucket.
	MaxStatsBuckets = 288
	// MaxStatsWindow bounds FireStatsParams' To-From.
	MaxStatsWindow = 7 * 24 * time.Hour
	// MaxStatsRuns bounds the runs one FireStats call reads.
	MaxStatsRuns = 1_000_000
	// MaxUpcoming bounds UpcomingFires' limit.
	MaxUpcoming = 500
	// MaxOutcomeTasks and MaxOutcomesPerTask bound RecentOutcomes.
	MaxOutcomeTasks    = 500
	MaxOutcomesPerTask = 10
)

// FireStatsParams are the arguments of RunStats.FireStats.
type FireStatsParams struct {
	From, To time.Time
	Bucket   time.Duration
}

// Buckets is the number of buckets of p (the last one may be partial).
func (p FireStatsParams) Buckets() int {
	if p.Bucket <= 0 {
		return 0
	}
	return int((p.To.Sub(p.From) + p.Bucket - 1) / p.Bucket)
}

// Check validates p: From before To, at most MaxStatsWindow apart, a
// bucket of at least a second, at most MaxStatsBuckets buckets. Errors
// are task.ErrInvalid naming window or bucket.
func (p FireStatsParams) Check() error {
	w := p.To.Sub(p.From)
	switch {
	case p.From.IsZero() || p.To.IsZero() || w <= 0:
		return task.Invalid("window", "must be a positive span")
	case w > MaxStatsWindow:
		return task.Invalid("window", "must be at most %s", MaxStatsWindow)
	case p.Bucket < time.Second:
		return task.Invalid("bucket", "must be at least 1s")
	case p.Buckets() > MaxStatsBuckets:
		return task.Invalid("bucket", "makes %d buckets of the window, more than %d", p.Buckets(), MaxStatsBuckets)
	}
	return nil
}

// FireStats is the answer of RunStats.FireStats.
type FireStats struct {
	From    time.Time     `json:"from"`
	To      time.Time     `json:"to"`
	Bucket  time.Duration `json:"-"`
	Buckets []FireBucket  `json:"buckets"`
	// Runs is how many runs were read; Truncated says the read stopped at
	// MaxStatsRuns (the oldest buckets then count less than happened).
	Runs      int  `json:"runs"`
	Truncated bool `json:"truncated"`
}

// FireBucket is one interval of FireStats. Fires counts the runs fired in
// it that were delivered or tried (every state but skipped and rejected);
// Failures those of them that failed (failed, dead, timeout); LagP99MS is
// the 99th percentile of their fired_at − slot in milliseconds (0 without
// fires).
type FireBucket struct {
	Start    time.Time `json:"start"`
	Fires    int       `json:"fires"`
	Failures int       `json:"failures"`
	LagP99MS int64     `json:"lag_p99_ms"`
}

// UpcomingFire is one entry of RunStats.UpcomingFires.
type UpcomingFire struct {
	TaskID   string    `json:"task_id"`
	Scenario string    `json:"scenario,omitempty"`
	RowID    string    `json:"row_id,omitempty"`
	NextFire time.Time `json:"next_fire"`
}

// Outcome is one finished run of RunStats.RecentOutcomes.
type Outcome struct {
	TriggerID string        `json:"trigger_id"`
	State     task.RunState `json:"state"`
	FiredAt   time.Time     `json:"fired_at"`
	Error     string        `json:"error,omitempty"`
}

// CheckOutcomes validates RecentOutcomes' arguments (task.ErrInvalid).
func CheckOutcomes(taskIDs []string, perTask int) error {
	if len(taskIDs) > MaxOutcomeTasks {
		return task.Invalid("task_ids", "at most %d, got %d", MaxOutcomeTasks, len(taskIDs))
	}
	if perTask < 1 || perTask > MaxOutcomesPerTask {
		return task.Invalid("per_task", "must be 1 to %d, got %d", MaxOutcomesPerTask, perTask)
	}
	return nil
}

// CheckUpcoming validates UpcomingFires' arguments (task.ErrInvalid).
func CheckUpcoming(from, to time.Time, limit int) error {
	if !to.After(from) {
		return task.Invalid("window", "must be a positive span")
	}
	if limit < 1 || limit > MaxUpcoming {
		return task.Invalid("limit", "must be 1 to %d, got %d", MaxUpcoming, limit)
	}
	return nil
}

// FireStatsBuilder folds the runs a driver reads into FireStats, so both
// drivers count alike. Feed it with Add; Result ends it.
type FireStatsBuilder struct {
	p     FireStatsParams
	fromM int64
	bms   int64
	out   *FireStats
	lags  [][]int64
}

// NewFireStatsBuilder starts the stats of p (checked by the caller).
func NewFireStatsBuilder(p FireStatsParams) *FireStatsBuilder {
	n := p.Buckets()
	b := &FireStatsBuilder{p: p, fromM: UnixMS(p.From), bms: p.Bucket.Milliseconds(),
		out:  &FireStats{From: p.From.UTC(), To: p.To.UTC(), Bucket: p.Bucket, Buckets: make([]FireBucket, n)},
		lags: make([][]int64, n)}
	for i := range b.out.Buckets {
		b.out.Buckets[i].Start = p.From.Add(time.Duration(i) * p.Bucket).UTC()
	}
	return b
}

// Add counts one run (times in unix milliseconds). It reports false once
// MaxStatsRuns runs were added: the caller stops reading.
func (b *FireStatsBuilder) Add(firedMS, slotMS int64, state task.RunState) bool {
	if b.out.Runs >= MaxStatsRuns {
		b.out.Truncated = true
		return false
	}
	b.out.Runs++
	if state == task.RunSkipped || state == task.RunRejected || firedMS < b.fromM {
		return true
	}
	i := int((firedMS - b.fromM) / b.bms)
	if i >= len(b.out.Buckets) {
		return true
	}
	bk := &b.out.Buckets[i]
	bk.Fires++
	if state == task.RunFailed || state == task.RunDead || state == task.RunTimeout {
		bk.Failures++
	}
	b.lags[i] = append(b.lags[i], max(0, firedMS-slotMS))
	return true
}

// Result returns the stats with each bucket's lag p99.
func (b *FireStatsBuilder) Result() *FireStats {
	for i, l := range b.lags {
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		// nearest rank: the smallest lag at or above 99% of the fires
		k := (99*len(l) + 99) / 100
		b.out.Buckets[i].LagP99MS = l[k-1]
	}
	return b.out
}
