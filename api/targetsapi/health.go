package targetsapi

import (
	"context"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/task"
)

// targetAnswer is a target as the API answers it: its fields, secrets
// masked, and its health (task.TargetHealth: the outcomes of the
// deliveries to it and of its probe). A client may send it back as it
// is: a PUT or POST ignores health.
type targetAnswer struct {
	*task.Target
	// Health is absent only when it could not be read (the error is
	// logged): the target itself was read or written.
	Health *task.TargetHealth `json:"health,omitempty"`
}

// withHealth returns the answers of targets: each redacted, with its
// health read in one store call.
func (a *API) withHealth(ctx context.Context, targets []*task.Target) []targetAnswer {
	out := make([]targetAnswer, len(targets))
	ids := make([]string, len(targets))
	for i, t := range targets {
		out[i].Target = t.Redacted()
		ids[i] = t.ID
	}
	if len(ids) == 0 {
		return out
	}
	health, err := a.store.TargetHealth(ctx, ids)
	if err != nil {
		a.Logger().ErrorContext(ctx, "read target health", "targets", len(ids), "error", err)
		return out
	}
	for i := range out {
		h := health[out[i].ID]
		out[i].Health = &h
	}
	return out
}

// writeTarget answers with t, its secrets masked and its health, and its
// version as ETag, for If-Match.
func (a *API) writeTarget(c *gin.Context, status int, t *task.Target) {
	httpapi.WriteVersioned(c, status, t.Version, a.withHealth(c.Request.Context(), []*task.Target{t})[0])
}
