package targetsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// The targets API (design note 001, docs/SEEDS.md): where tasks' fires go.
//
//	GET    /api/v1/targets?after=&limit=  → 200 {targets, next_after}
//	POST   /api/v1/targets                → 201 the target (409 id taken)
//	GET    /api/v1/targets/:id            → 200 the target (404)
//	PUT    /api/v1/targets/:id            → 200 the target (404; 409 stale If-Match)
//	DELETE /api/v1/targets/:id            → 204 (404)
//
// Answers show a target's secrets as task.SecretMask (see task.Target.Redacted);
// a PUT that sends the mask back keeps the stored value.

// targetBody is the body of POST /api/v1/targets and PUT
// /api/v1/targets/:id: a target's fields (see task.Target). version,
// created_at and updated_at are the server's, so that a GET answer can be
// sent back as it is: version is the If-Match of a PUT (ignored by a POST),
// the times and health are ignored. Any other field is refused.
type targetBody struct {
	ID              string              `json:"id"`
	Name            string              `json:"name"`
	Kind            task.Channel        `json:"kind"`
	State           task.TargetState    `json:"state"`
	FeedbackTimeout int                 `json:"feedback_timeout"`
	HTTP            *task.HTTPTarget    `json:"http"`
	Exec            *task.ExecTarget    `json:"exec"`
	Kafka           *task.KafkaTarget   `json:"kafka"`
	Builtin         *task.BuiltinTarget `json:"builtin"`
	Labels          map[string]string   `json:"labels"`
	Probe           *task.TargetProbe   `json:"probe"`
	Health          json.RawMessage     `json:"health"`
	Version         json.RawMessage     `json:"version"`
	CreatedAt       json.RawMessage     `json:"created_at"`
	UpdatedAt       json.RawMessage     `json:"updated_at"`
}

// target returns the task.Target b describes.
func (b *targetBody) target() *task.Target {
	return &task.Target{ID: b.ID, Name: b.Name, Kind: b.Kind, State: b.State,
		FeedbackTimeout: b.FeedbackTimeout, HTTP: b.HTTP, Exec: b.Exec, Kafka: b.Kafka, Builtin: b.Builtin,
		Labels: b.Labels, Probe: b.Probe}
}

// targetsPage is the answer of GET /api/v1/targets.
type targetsPage struct {
	Targets []targetAnswer `json:"targets"`
	// NextAfter is the `after` of the next page, "" on the last page.
	NextAfter string `json:"next_after"`
}

// listTargets handles GET /api/v1/targets?after=&limit=: targets in id
// order after `after`.
func (a *API) listTargets(c *gin.Context) {
	after, err := httpapi.StringQuery(c, "after")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	limit, err := httpapi.IntQuery(c, "limit", httpapi.DefaultLimit, 1, httpapi.MaxLimit)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	// One extra target tells whether another page follows.
	list, err := a.store.ListTargets(c.Request.Context(), after, limit+1)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	var page targetsPage
	if len(list) > limit {
		list = list[:limit]
		page.NextAfter = list[limit-1].ID
	}
	page.Targets = a.withHealth(c.Request.Context(), list)
	c.JSON(http.StatusOK, page)
}

// createTarget handles POST /api/v1/targets. A target without a state
// starts preset (it refuses triggers until it is switched to running).
func (a *API) createTarget(c *gin.Context) {
	var body targetBody
	if err := httpapi.ReadJSON(c, &body, false); err != nil {
		a.WriteError(c, err)
		return
	}
	t := body.target()
	if t.State == "" {
		t.State = task.TargetPreset
	}
	if err := t.RestoreSecrets(nil); err != nil {
		a.WriteError(c, err)
		return
	}
	if err := a.validTarget(t); err != nil {
		a.WriteError(c, err)
		return
	}
	ctx := c.Request.Context()
	if err := a.store.CreateTarget(ctx, t); err != nil {
		a.WriteError(c, httpapi.DescribeAs(err, task.ErrConflict, task.CodeAlreadyExists, "target %q already exists", t.ID))
		return
	}
	saved, err := a.store.GetTarget(ctx, t.ID)
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "target %q was deleted right after it was created", t.ID))
		return
	}
	a.RecordChange(c, store.AuditKindTarget, saved.ID, store.AuditCreate, targetSummary(saved))
	c.Header("Location", strings.TrimSuffix(c.Request.URL.Path, "/")+"/"+url.PathEscape(t.ID))
	a.writeTarget(c, http.StatusCreated, saved)
}

// getTarget handles GET /api/v1/targets/:id.
func (a *API) getTarget(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	t, err := a.store.GetTarget(c.Request.Context(), id)
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "target %q not found", id))
		return
	}
	a.writeTarget(c, http.StatusOK, t)
}

// putTarget handles PUT /api/v1/targets/:id: the body replaces the
// target's fields. With If-Match (or the body's version) the target must
// still be at that version, else 409.
func (a *API) putTarget(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	var body targetBody
	if err := httpapi.ReadJSON(c, &body, false); err != nil {
		a.WriteError(c, err)
		return
	}
	if body.ID != "" && body.ID != id {
		a.WriteError(c, task.Invalid("id", "the id of a target cannot change (it is %q); create a new target instead",
			task.Truncate(id, 100)))
		return
	}
	body.ID = id
	want, err := httpapi.BodyIfMatch(c.GetHeader("If-Match"), body.Version)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	t := body.target()
	if want, err = a.restoreSecrets(c.Request.Context(), t, want); err != nil {
		a.WriteError(c, err)
		return
	}
	if err := a.validTarget(t); err != nil {
		a.WriteError(c, err)
		return
	}
	saved, err := a.store.UpdateTarget(c.Request.Context(), t, want)
	if err != nil {
		err = httpapi.Describe(err, task.ErrNotFound, "target %q not found", id)
		err = httpapi.DescribeAs(err, task.ErrConflict, task.CodeVersionConflict, "target %q changed since you loaded it "+
			"(you sent version %d); reload and try again", id, want)
		a.WriteError(c, err)
		return
	}
	a.RecordChange(c, store.AuditKindTarget, saved.ID, store.AuditUpdate, targetSummary(saved))
	a.writeTarget(c, http.StatusOK, saved)
}

// deleteTarget handles DELETE /api/v1/targets/:id. A target that a task
// (a row's, or a flow step's), a row not synced yet or a flow names is
// refused 409, naming a few of them and how many there are (inUse); the
// check and the delete are one step against concurrent writers
// (deleteUnused).
func (a *API) deleteTarget(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	want, err := httpapi.IfMatch(c.GetHeader("If-Match"), nil)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	old, err := a.deleteUnused(c.Request.Context(), id, want)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	// What was deleted is the old state, its secrets masked.
	a.RecordDelete(c, store.AuditKindTarget, id, deletedSummary(old))
	c.Status(http.StatusNoContent)
}

// validTarget runs task.Target.Validate, then Deps.CheckTarget.
func (a *API) validTarget(t *task.Target) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if a.check == nil {
		return nil
	}
	err := a.check(t)
	var ve *task.ValidationError
	if err == nil || errors.As(err, &ve) {
		return err
	}
	field := string(t.Kind)
	return httpapi.Err(http.StatusBadRequest, field, "%s: %v", field, err)
}

// restoreSecrets puts the stored secrets in the places where t, sent by a
// client that read the target, holds task.SecretMask. It returns the
// version the update must match: want, or without one the version the
// secrets were read at, so that a change in between is a 409 rather than
// an old secret written back.
func (a *API) restoreSecrets(ctx context.Context, t *task.Target, want int64) (int64, error) {
	if !t.HasSecretMask() {
		return want, nil
	}
	old, err := a.store.GetTarget(ctx, t.ID)
	if err != nil {
		return want, httpapi.Describe(err, task.ErrNotFound, "target %q not found", t.ID)
	}
	if err := t.RestoreSecrets(old); err != nil {
		return want, err
	}
	if want == 0 {
		want = old.Version
	}
	return want, nil
}

// deleteUnused deletes target id unless something names it, as one step
// against writers naming it meanwhile (store.TargetUsers): the tombstone
// is stored first, then the writers' holds and the users are counted, and
// the target is deleted only when there are none, and only at version
// want when it is not 0 (If-Match; checked on the target as read just
// before the delete). It returns the target as it was.
func (a *API) deleteUnused(ctx context.Context, id string, want int64) (*task.Target, error) {
	if err := a.store.BeginTargetDelete(ctx, id, a.Now()); err != nil {
		return nil, httpapi.DescribeAs(err, task.ErrConflict, task.CodeConflict,
			"target %q is being deleted by another request; try again", id)
	}
	// The tombstone goes when this answers: a writer holding id after this
	// finds the target gone, or still there when it was in use. Its removal
	// is not tied to the request, which may be gone.
	defer func() { _ = a.store.EndTargetDelete(context.WithoutCancel(ctx), id) }()
	if err := a.inUse(ctx, id); err != nil {
		return nil, err
	}
	old, err := a.store.GetTarget(ctx, id)
	if err != nil {
		return nil, httpapi.Describe(err, task.ErrNotFound, "target %q not found", id)
	}
	if want > 0 && old.Version != want {
		return nil, task.VersionConflict(fmt.Sprintf("target %q", id), old.Version, want)
	}
	if err := a.store.DeleteTarget(ctx, id); err != nil {
		return nil, httpapi.Describe(err, task.ErrNotFound, "target %q not found", id)
	}
	return old, nil
}
