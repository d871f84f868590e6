package patrol

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// Armer arms tasks on this node's scheduler (server's gocron wrapper).
type Armer interface {
	// Arm schedules t (replacing an older arming of the same task).
	Arm(ctx context.Context, t *task.Task) error
	// Disarm removes a task's schedule; unknown ids are ignored.
	Disarm(taskID string)
	// Armed returns the ids of the tasks armed here.
	Armed() []string
}

// BatchArmer is an Armer that arms many tasks with shared store work; the
// publish patrol uses it when its Armer has it.
type BatchArmer interface {
	// ArmBatch arms each of ts as Arm does and returns one error per task.
	ArmBatch(ctx context.Context, ts []*task.Task) []error
}

// ClaimStore is what the publish patrol needs from storage.
type ClaimStore interface {
	ClaimTasks(ctx context.Context, p store.ClaimParams) ([]*task.Task, error)
}

// PublishResult counts what one publish pass did.
type PublishResult struct {
	Claimed int
	Armed   int
	Failed  int
}

// Publish is the publish patrol: claim due tasks and arm them here.
type Publish struct {
	logger *slog.Logger
	store  ClaimStore
	armer  Armer
	node   string
	lease  time.Duration
	batch  int
	now    func() time.Time
}

// NewPublish returns the publish patrol for node, claiming with lease.
func NewPublish(logger *slog.Logger, st ClaimStore, armer Armer, node string, lease time.Duration, batch int, now func() time.Time) *Publish {
	if batch <= 0 {
		batch = 500
	}
	if now == nil {
		now = time.Now
	}
	return &Publish{logger: logger.With("component", "patrol.publish"), store: st, armer: armer,
		node: node, lease: lease, batch: batch, now: now}
}

// maxClaimRounds bounds the batches one pass claims, so one pass stays short.
const maxClaimRounds = 200

// RunOnce claims every available task (in batches) and arms it.
func (p *Publish) RunOnce(ctx context.Context) (PublishResult, error) {
	var res PublishResult
	for range maxClaimRounds {
		tasks, err := p.store.ClaimTasks(ctx, store.ClaimParams{
			Owner: p.node, LeaseUntil: p.now().Add(p.lease), Limit: p.batch, ArmBy: p.now(),
		})
		if err != nil {
			return res, fmt.Errorf("claim tasks: %w", err)
		}
		res.Claimed += len(tasks)
		for i, err := range p.arm(ctx, tasks) {
			if err != nil {
				res.Failed++
				p.logger.ErrorContext(ctx, "arm task", "task_id", tasks[i].TaskID, "error", err)
				continue
			}
			res.Armed++
		}
		if len(tasks) < p.batch {
			break
		}
	}
	return res, nil
}

// arm arms one claimed batch: in one ArmBatch when the Armer has it, else
// task by task. It returns one error per task.
func (p *Publish) arm(ctx context.Context, tasks []*task.Task) []error {
	if ba, ok := p.armer.(BatchArmer); ok {
		return ba.ArmBatch(ctx, tasks)
	}
	errs := make([]error, len(tasks))
	for i, t := range tasks {
		errs[i] = p.armer.Arm(ctx, t)
	}
	return errs
}
