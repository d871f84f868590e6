package faulty

import (
	"context"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// The write methods of Writes, each passed through do under its name.

// InsertRun is store.Ledger.InsertRun under the rules.
func (s *Store) InsertRun(ctx context.Context, r *task.Run) (bool, error) {
	return do(ctx, s, "InsertRun", func(ctx context.Context) (bool, error) { return s.Product.InsertRun(ctx, r) })
}

// RecordFire is store.Ledger.RecordFire under the rules.
func (s *Store) RecordFire(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error) {
	return do(ctx, s, "RecordFire", func(ctx context.Context) (bool, error) { return s.Product.RecordFire(ctx, r, status) })
}

// RecordFires is store.Ledger.RecordFires under the rules.
func (s *Store) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	return do(ctx, s, "RecordFires", func(ctx context.Context) ([]store.FireResult, error) {
		return s.Product.RecordFires(ctx, recs)
	})
}

// UpdateRun is store.Ledger.UpdateRun under the rules.
func (s *Store) UpdateRun(ctx context.Context, r *task.Run) error {
	return err0(ctx, s, "UpdateRun", func(ctx context.Context) error { return s.Product.UpdateRun(ctx, r) })
}

// FinishRun is store.Ledger.FinishRun under the rules.
func (s *Store) FinishRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) error {
	return err0(ctx, s, "FinishRun", func(ctx context.Context) error { return s.Product.FinishRun(ctx, r, status) })
}

// TakeOverRun is store.Ledger.TakeOverRun under the rules.
func (s *Store) TakeOverRun(ctx context.Context, p store.TakeOverParams) (*task.Run, error) {
	return do(ctx, s, "TakeOverRun", func(ctx context.Context) (*task.Run, error) { return s.Product.TakeOverRun(ctx, p) })
}

// AcceptRun is store.Control.AcceptRun under the rules.
func (s *Store) AcceptRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error) {
	return do(ctx, s, "AcceptRun", func(ctx context.Context) (bool, error) { return s.Product.AcceptRun(ctx, r, status) })
}

// AddFeedback is store.Control.AddFeedback under the rules.
func (s *Store) AddFeedback(ctx context.Context, p store.FeedbackParams) (*task.Run, error) {
	return do(ctx, s, "AddFeedback", func(ctx context.Context) (*task.Run, error) { return s.Product.AddFeedback(ctx, p) })
}

// ExpireAccepted is store.Control.ExpireAccepted under the rules.
func (s *Store) ExpireAccepted(ctx context.Context, now time.Time, limit int,
	status func(*task.Run) store.TaskStatusParams) ([]*task.Run, error) {
	return do(ctx, s, "ExpireAccepted", func(ctx context.Context) ([]*task.Run, error) {
		return s.Product.ExpireAccepted(ctx, now, limit, status)
	})
}

// SetTaskStatus is store.Tasks.SetTaskStatus under the rules.
func (s *Store) SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error {
	return err0(ctx, s, "SetTaskStatus", func(ctx context.Context) error { return s.Product.SetTaskStatus(ctx, p) })
}

// SetTaskStatuses is store.Tasks.SetTaskStatuses under the rules.
func (s *Store) SetTaskStatuses(ctx context.Context, ps []store.TaskStatusParams) error {
	return err0(ctx, s, "SetTaskStatuses", func(ctx context.Context) error { return s.Product.SetTaskStatuses(ctx, ps) })
}

// SetTaskState is store.Control.SetTaskState under the rules.
func (s *Store) SetTaskState(ctx context.Context, p store.TaskStateParams) (*task.Task, error) {
	return do(ctx, s, "SetTaskState", func(ctx context.Context) (*task.Task, error) { return s.Product.SetTaskState(ctx, p) })
}

// CreateJob is store.Jobs.CreateJob under the rules.
func (s *Store) CreateJob(ctx context.Context, t *task.Task) error {
	return err0(ctx, s, "CreateJob", func(ctx context.Context) error { return s.Product.CreateJob(ctx, t) })
}

// CreateJobs is store.Jobs.CreateJobs under the rules.
func (s *Store) CreateJobs(ctx context.Context, ts []*task.Task, evs []store.JobEvent) ([]error, error) {
	return do(ctx, s, "CreateJobs", func(ctx context.Context) ([]error, error) { return s.Product.CreateJobs(ctx, ts, evs) })
}

// ReplaceJob is store.Jobs.ReplaceJob under the rules.
func (s *Store) ReplaceJob(ctx context.Context, key, oldID string, t *task.Task) error {
	return err0(ctx, s, "ReplaceJob", func(ctx context.Context) error { return s.Product.ReplaceJob(ctx, key, oldID, t) })
}

// AddJobEvents is store.Jobs.AddJobEvents under the rules.
func (s *Store) AddJobEvents(ctx context.Context, evs []store.JobEvent) error {
	return err0(ctx, s, "AddJobEvents", func(ctx context.Context) error { return s.Product.AddJobEvents(ctx, evs) })
}

// AddOutbox is store.Outbox.AddOutbox under the rules.
func (s *Store) AddOutbox(ctx context.Context, m *task.OutboxMessage) error {
	return err0(ctx, s, "AddOutbox", func(ctx context.Context) error { return s.Product.AddOutbox(ctx, m) })
}

// ClaimTasks is store.Tasks.ClaimTasks under the rules.
func (s *Store) ClaimTasks(ctx context.Context, p store.ClaimParams) ([]*task.Task, error) {
	return do(ctx, s, "ClaimTasks", func(ctx context.Context) ([]*task.Task, error) { return s.Product.ClaimTasks(ctx, p) })
}

// RenewLeases is store.Tasks.RenewLeases under the rules.
func (s *Store) RenewLeases(ctx context.Context, owner string, until time.Time) (int, error) {
	return do(ctx, s, "RenewLeases", func(ctx context.Context) (int, error) { return s.Product.RenewLeases(ctx, owner, until) })
}

// BeatNode is store.Nodes.BeatNode under the rules.
func (s *Store) BeatNode(ctx context.Context, n store.Node) error {
	return err0(ctx, s, "BeatNode", func(ctx context.Context) error { return s.Product.BeatNode(ctx, n) })
}

// TakeCCSlot is store.CCSlots.TakeCCSlot under the rules.
func (s *Store) TakeCCSlot(ctx context.Context, p store.TakeCCSlotParams) (store.CCSlot, bool, error) {
	type took struct {
		slot store.CCSlot
		ok   bool
	}
	v, err := do(ctx, s, "TakeCCSlot", func(ctx context.Context) (took, error) {
		slot, ok, err := s.Product.TakeCCSlot(ctx, p)
		return took{slot, ok}, err
	})
	return v.slot, v.ok, err
}

// PutSettings is store.SettingsStore.PutSettings under the rules.
func (s *Store) PutSettings(ctx context.Context, set *store.Settings, ifVersion int64) (*store.Settings, error) {
	return do(ctx, s, "PutSettings", func(ctx context.Context) (*store.Settings, error) {
		return s.Product.PutSettings(ctx, set, ifVersion)
	})
}
