// Package faulty wraps a store with injected faults, for tests of what
// the engine does when its store answers with an error: a write that
// fails before it is stored, one that is stored and still reports failure
// (the outcome-unknown case every networked database has), one that times
// out, one that is slow. Rules pick the calls (by method, in a window of
// time, every Kth call, or by chance from a seed); everything else passes
// through to the wrapped driver untouched.
//
// Only writes fail: the methods listed in Writes, the ones a fire, a
// run's delivery, a job's life and a node's standing go through. Reads
// pass through, so a test sees what was really stored.
package faulty

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"cronsheet/store"
)

// ErrInjected is wrapped by every error a fault returns, so a test can
// tell an injected failure from a real one.
var ErrInjected = errors.New("faulty: injected store fault")

// Mode is what a fault does to the call it hits.
type Mode int

const (
	// Before fails the call without calling the store: nothing is stored.
	Before Mode = iota + 1
	// After calls the store and, when it succeeded, reports failure: the
	// change is stored though the caller is told it is not.
	After
	// Timeout waits for the call's context to end, at most Rule.Delay
	// (1 s when 0), then fails without calling the store.
	Timeout
	// Slow waits Rule.Delay (or until the context ends), then calls the
	// store.
	Slow
)

// String names m as the stats and logs do.
func (m Mode) String() string {
	switch m {
	case Before:
		return "before"
	case After:
		return "after"
	case Timeout:
		return "timeout"
	case Slow:
		return "slow"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// Writes lists the methods a rule may name: the store's writes on the
// delivery path (fires, runs, outcomes, feedback, task statuses), the
// jobs' writes, and a node's standing (claims, leases, heartbeats, cc
// slots, settings).
func Writes() []string {
	return []string{
		"InsertRun", "RecordFire", "RecordFires", "UpdateRun", "FinishRun", "FinishRuns", "WriteRuns",
		"TakeOverRun", "AcceptRun", "AddFeedback", "ExpireAccepted", "SetTaskStatus", "SetTaskStatuses",
		"SetTaskState", "CreateJob", "CreateJobs", "ReplaceJob", "AddJobEvents", "AddOutbox",
		"ClaimTasks", "RenewLeases", "BeatNode", "TakeCCSlot", "PutSettings",
	}
}

// Rule says which calls fail and how. The zero values of its selectors
// select everything: every write method, at any time, every call.
type Rule struct {
	Mode Mode
	// Methods are the methods the rule hits (names from Writes); none
	// means all of them.
	Methods []string
	// From and Until bound the window in which the rule hits (a blip);
	// zero means unbounded on that side.
	From, Until time.Time
	// Every hits every Every-th call the rule selects (the Every-th, the
	// 2×Every-th, …); 0 or 1 hits each.
	Every int
	// Chance, when above 0, hits a selected call with that probability,
	// drawn from the Store's seed.
	Chance float64
	// Delay is how long Slow waits, and the longest Timeout waits.
	Delay time.Duration
}

// Stats counts what the faults did.
type Stats struct {
	// Calls counts the write calls seen, by method.
	Calls map[string]int
	// Injected counts the faults injected, by mode and by method.
	Injected map[Mode]int
	ByMethod map[string]int
}

// Total is the number of faults injected.
func (s Stats) Total() int {
	n := 0
	for _, v := range s.Injected {
		n += v
	}
	return n
}

// Store is a store.Product whose writes fail as its rules say. Build it
// with Wrap; AsProduct gives the value to hand to the code under test.
type Store struct {
	store.Product
	mu    sync.Mutex
	rng   *rand.Rand
	rules []rule
	stats Stats
	now   func() time.Time
}

// rule is a Rule with its count of selected calls.
type rule struct {
	Rule
	seen int
}

// Wrap returns a faulty store over inner, with no rule set (every call
// passes) and its chances drawn from seed.
func Wrap(inner store.Product, seed uint64) *Store {
	return &Store{Product: inner, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		stats: Stats{Calls: map[string]int{}, Injected: map[Mode]int{}, ByMethod: map[string]int{}}, now: time.Now}
}

// Set replaces the rules (none: every call passes).
func (s *Store) Set(rules ...Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = s.rules[:0]
	for _, r := range rules {
		s.rules = append(s.rules, rule{Rule: r})
	}
}

// Blip fails every call to methods (none: every write) in mode for d from
// now, replacing the rules.
func (s *Store) Blip(d time.Duration, mode Mode, methods ...string) {
	now := s.now()
	s.Set(Rule{Mode: mode, Methods: methods, From: now, Until: now.Add(d)})
}

// Stats returns a copy of the counts so far.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stats{Calls: map[string]int{}, Injected: map[Mode]int{}, ByMethod: map[string]int{}}
	for k, v := range s.stats.Calls {
		out.Calls[k] = v
	}
	for k, v := range s.stats.Injected {
		out.Injected[k] = v
	}
	for k, v := range s.stats.ByMethod {
		out.ByMethod[k] = v
	}
	return out
}

// pick returns the rule that hits this call of method, if any: the first
// rule that selects it and whose Every and Chance say so.
func (s *Store) pick(method string) (Rule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Calls[method]++
	now := s.now()
	for i := range s.rules {
		r := &s.rules[i]
		if len(r.Methods) > 0 && !slices.Contains(r.Methods, method) ||
			!r.From.IsZero() && now.Before(r.From) || !r.Until.IsZero() && !now.Before(r.Until) {
			continue
		}
		r.seen++
		if r.Every > 1 && r.seen%r.Every != 0 || r.Chance > 0 && s.rng.Float64() >= r.Chance {
			continue
		}
		s.stats.Injected[r.Mode]++
		s.stats.ByMethod[method]++
		return r.Rule, true
	}
	return Rule{}, false
}

// do runs write, the store's method, under the rule that hits it.
func do[T any](ctx context.Context, s *Store, method string, write func(context.Context) (T, error)) (T, error) {
	var zero T
	r, hit := s.pick(method)
	if !hit {
		return write(ctx)
	}
	fault := func(what string) error { return fmt.Errorf("%s: %s: %w", method, what, ErrInjected) }
	switch r.Mode {
	case Before:
		return zero, fault("failed before the write")
	case After:
		if v, err := write(ctx); err != nil {
			return v, err
		}
		return zero, fault("stored, then failed")
	case Timeout:
		wait(ctx, cmp.Or(r.Delay, time.Second))
		return zero, fmt.Errorf("%w (%w)", fault("timed out"), context.DeadlineExceeded)
	case Slow:
		if !wait(ctx, r.Delay) {
			return zero, ctx.Err()
		}
	}
	return write(ctx)
}

// wait waits d or until ctx ends, and reports whether it waited d out.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// err0 adapts a method that returns only an error to do.
func err0(ctx context.Context, s *Store, method string, write func(context.Context) error) error {
	_, err := do(ctx, s, method, func(ctx context.Context) (struct{}, error) { return struct{}{}, write(ctx) })
	return err
}
