package jobsapi

import (
	"context"
	"time"

	"cronsheet/jobs/jobapi"
	"cronsheet/store"
)

// JobsService is what the jobs API handlers need from the jobs service
// (jobs.Service implements it). The HTTP layer depends on this and on the
// wire types of jobapi only, not on the service and what it delivers
// with (executors, SMTP, Twilio, Kafka).
type JobsService interface {
	Submit(ctx context.Context, r jobapi.Request) (*jobapi.View, error)
	SubmitBatch(ctx context.Context, reqs []jobapi.Request) ([]jobapi.BatchResult, error)
	Upsert(ctx context.Context, key string, r jobapi.Request) (*jobapi.View, error)
	Wait(ctx context.Context, id string, d time.Duration) (*jobapi.View, error)
	Cancel(ctx context.Context, id string) (*jobapi.View, error)
	Block(ctx context.Context, id string) (*jobapi.View, error)
	Unblock(ctx context.Context, id string) (*jobapi.View, error)
	Backfill(ctx context.Context, req jobapi.BackfillRequest) (*jobapi.BackfillAnswer, error)
	List(ctx context.Context, q jobapi.ListQuery) ([]*jobapi.View, store.RunCursor, error)
}
