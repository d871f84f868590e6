package faulty

import (
	"context"
	"time"

	"cronsheet/store"
)

// The optional parts of a store (store.RunFinisher, store.RunWriter,
// store.Clock) are offered by the value AsProduct returns exactly when the
// wrapped store has them, since callers choose their path by asking.

// finisher is store.RunFinisher under the rules.
type finisher struct{ s *Store }

// FinishRuns is store.RunFinisher.FinishRuns under the rules.
func (f finisher) FinishRuns(ctx context.Context, recs []store.FireRecord) ([]error, error) {
	return do(ctx, f.s, "FinishRuns", func(ctx context.Context) ([]error, error) {
		return f.s.Product.(store.RunFinisher).FinishRuns(ctx, recs)
	})
}

// writer is store.RunWriter under the rules.
type writer struct{ s *Store }

// WriteRuns is store.RunWriter.WriteRuns under the rules.
func (w writer) WriteRuns(ctx context.Context, b store.RunBatch) (store.RunWrites, error) {
	return do(ctx, w.s, "WriteRuns", func(ctx context.Context) (store.RunWrites, error) {
		return w.s.Product.(store.RunWriter).WriteRuns(ctx, b)
	})
}

// clock is store.Clock, passed through (a read).
type clock struct{ s *Store }

// ServerTime is store.Clock.ServerTime.
func (c clock) ServerTime(ctx context.Context) (time.Time, error) {
	return c.s.Product.(store.Clock).ServerTime(ctx)
}

// AsProduct returns s as the store to hand to the code under test: with
// FinishRuns, WriteRuns and ServerTime exactly when the wrapped store has
// them.
func (s *Store) AsProduct() store.Product {
	_, f := s.Product.(store.RunFinisher)
	_, w := s.Product.(store.RunWriter)
	_, c := s.Product.(store.Clock)
	switch {
	case f && w && c:
		return struct {
			*Store
			finisher
			writer
			clock
		}{s, finisher{s}, writer{s}, clock{s}}
	case f && w:
		return struct {
			*Store
			finisher
			writer
		}{s, finisher{s}, writer{s}}
	case f && c:
		return struct {
			*Store
			finisher
			clock
		}{s, finisher{s}, clock{s}}
	case w && c:
		return struct {
			*Store
			writer
			clock
		}{s, writer{s}, clock{s}}
	case f:
		return struct {
			*Store
			finisher
		}{s, finisher{s}}
	case w:
		return struct {
			*Store
			writer
		}{s, writer{s}}
	case c:
		return struct {
			*Store
			clock
		}{s, clock{s}}
	}
	return s
}
