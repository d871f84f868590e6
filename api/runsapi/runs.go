package runsapi

import (
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// The fire ledger and execution feedback:
//
//	GET  /api/v1/runs?task_id=&title=&target=&state=&cursor=&limit=
//	     → 200 {runs, next}: runs newest first (by fired_at, then
//	       trigger_id), every filter optional; title keeps the runs of
//	       the tasks whose title holds every word of it. Each run carries
//	       its task's title (task_title). next is an opaque cursor:
//	       pass it as `cursor` for the next (older) page; "" on the last page.
//	GET  /api/v1/runs?task_id=&before=&limit=
//	     → the older form: a task's runs newest slot first, before the
//	       RFC 3339 slot `before`; next is always "".
//	GET  /api/v1/runs/:trigger_id → 200 the run with every feedback report (404)
//	POST /api/v1/runs/:trigger_id/feedback {status, message, output, progress}
//	     → 200 the run (400 bad body, 404 unknown run, 409 finished run or
//	       too many reports)

// runsPage is the answer of GET /api/v1/runs.
type runsPage struct {
	Runs []runView `json:"runs"`
	// Next is the cursor of the next, older page; "" on the last page.
	Next string `json:"next"`
}

// feedbackBody is the body of POST /api/v1/runs/:trigger_id/feedback.
type feedbackBody struct {
	// Status is required: 0 is success, anything else a failure code.
	Status   *int   `json:"status"`
	Message  string `json:"message"`
	Output   string `json:"output"`
	Progress bool   `json:"progress"`
}

// maxCursorLen bounds the cursor query parameter.
const maxCursorLen = 512

// listRuns handles GET /api/v1/runs (see above).
func (a *API) listRuns(c *gin.Context) {
	_, legacy := c.GetQuery("before")
	if legacy {
		a.listTaskRuns(c)
		return
	}
	q, err := runQuery(c)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	limit := q.Limit
	q.Limit++ // one extra run tells whether another page follows
	runs, err := a.queryRuns(c, q)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	next := ""
	if len(runs) > limit {
		last := runs[limit-1]
		runs = runs[:limit]
		next = encodeCursor(store.RunCursor{FiredAt: last.FiredAt, TriggerID: last.TriggerID})
	}
	a.writePage(c, runs, next)
}

// writePage answers a page of runs with their tasks' titles.
func (a *API) writePage(c *gin.Context, runs []*task.Run, next string) {
	views, err := a.withTitles(c.Request.Context(), runs)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, runsPage{Runs: views, Next: next})
}

// runQuery reads the filters, cursor and limit of GET /api/v1/runs.
func runQuery(c *gin.Context) (store.RunQuery, error) {
	var q store.RunQuery
	var err error
	if q.TaskID, err = httpapi.StringQuery(c, "task_id"); err != nil {
		return q, err
	}
	if q.Target, err = httpapi.StringQuery(c, "target"); err != nil {
		return q, err
	}
	if s := c.Query("state"); s != "" {
		if !knownRunState(task.RunState(s)) {
			return q, task.Invalid("state", "must be one of %s; got %q", strings.Join(runStateNames(), ", "), task.Truncate(s, 40))
		}
		q.State = task.RunState(s)
	}
	if s := c.Query("cursor"); s != "" {
		if q.Before, err = decodeCursor(s); err != nil {
			return q, err
		}
	}
	if q.Limit, err = httpapi.IntQuery(c, "limit", httpapi.DefaultLimit, 1, httpapi.MaxLimit); err != nil {
		return q, err
	}
	return q, nil
}

// listTaskRuns serves the older form of GET /api/v1/runs: task_id
// required, paged by the slot `before`.
func (a *API) listTaskRuns(c *gin.Context) {
	for _, name := range []string{"target", "state", "cursor"} {
		if c.Query(name) == "" {
			continue
		}
		a.WriteError(c, task.Invalid("before", "pages one task's runs alone; with %s, page with cursor", name))
		return
	}
	taskID, err := httpapi.StringQuery(c, "task_id")
	if err == nil && taskID == "" {
		err = task.Invalid("task_id", "required")
	}
	if err != nil {
		a.WriteError(c, err)
		return
	}
	before, err := httpapi.TimeQuery(c, "before")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	limit, err := httpapi.IntQuery(c, "limit", httpapi.DefaultLimit, 1, httpapi.MaxLimit)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	runs, err := a.store.ListRuns(c.Request.Context(), taskID, before, limit)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	a.writePage(c, runs, "")
}

// getRun handles GET /api/v1/runs/:trigger_id: the run with its feedback.
func (a *API) getRun(c *gin.Context) {
	id, err := httpapi.PathID(c, "trigger_id")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	r, err := a.store.GetRun(c.Request.Context(), id)
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "run %q not found", id))
		return
	}
	views, err := a.withTitles(c.Request.Context(), []*task.Run{r})
	if err != nil {
		a.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, views[0])
}

// maxCancelReason bounds the reason given with a cancel.
const maxCancelReason = 500

// cancelRunHandler handles POST /api/v1/runs/:trigger_id/cancel with an
// optional body {"reason": "…"}: an unfinished run (a stuck one
// included) ends cancelled, whichever node held it; the run may be
// backfilled afterwards.
func (a *API) cancelRunHandler(c *gin.Context) {
	if a.cancelRun == nil {
		c.JSON(http.StatusNotImplemented, httpapi.StatusBody(http.StatusNotImplemented, "cancelling runs is not available"))
		return
	}
	id, err := httpapi.PathID(c, "trigger_id")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	var body struct {
		Reason string `json:"reason"`
	}
	if err := httpapi.ReadJSON(c, &body, true); err != nil {
		a.WriteError(c, err)
		return
	}
	if len(body.Reason) > maxCancelReason {
		a.WriteError(c, task.Invalid("reason", "at most %d bytes", maxCancelReason))
		return
	}
	why := "cancelled by the user"
	if body.Reason != "" {
		why += ": " + body.Reason
	}
	r, err := a.cancelRun(c.Request.Context(), id, why)
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "run %q not found", id))
		return
	}
	a.RecordChange(c, store.AuditKindRun, id, store.AuditCancel, nil)
	c.JSON(http.StatusOK, r)
}

// addFeedback handles POST /api/v1/runs/:trigger_id/feedback: a target's
// report on a run it accepted. A final report (progress false) ends the
// run: done for status 0, else dead with the message as its error.
func (a *API) addFeedback(c *gin.Context) {
	if a.feedback == nil {
		c.JSON(http.StatusNotImplemented, httpapi.StatusBody(http.StatusNotImplemented, "feedback is not taken here"))
		return
	}
	id, err := httpapi.PathID(c, "trigger_id")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	var body feedbackBody
	if err := httpapi.ReadJSON(c, &body, false); err != nil {
		a.WriteError(c, err)
		return
	}
	if body.Status == nil {
		a.WriteError(c, task.Invalid("status", "required: 0 for success, another integer for a failure"))
		return
	}
	if *body.Status < math.MinInt32 || *body.Status > math.MaxInt32 {
		a.WriteError(c, task.Invalid("status", "must be an integer from %d to %d", math.MinInt32, math.MaxInt32))
		return
	}
	fb := task.Feedback{At: a.Now(), Status: *body.Status, Message: body.Message, Output: body.Output, Progress: body.Progress}
	if err := fb.Validate(); err != nil {
		a.WriteError(c, err)
		return
	}
	ctx := c.Request.Context()
	r, err := a.feedback.Feedback(ctx, store.FeedbackParams{TriggerID: id, Feedback: fb})
	if errors.Is(err, task.ErrConflict) {
		err = a.feedbackConflict(c, id, err)
	}
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "run %q not found", id))
		return
	}
	c.JSON(http.StatusOK, r)
}

// feedbackConflict says why run id took no feedback: it is finished (or
// not yet accepted), or holds task.MaxFeedback reports.
func (a *API) feedbackConflict(c *gin.Context, id string, err error) error {
	r, gerr := a.store.GetRun(c.Request.Context(), id)
	switch {
	case gerr != nil:
		return httpapi.WithMessage(err, err.Error())
	case r.State.Final():
		return httpapi.WithMessage(err, "run "+id+" is already "+string(r.State)+
			"; feedback is taken while it is running or accepted")
	case r.State != task.RunRunning && r.State != task.RunAccepted:
		return httpapi.WithMessage(err, "run "+id+" is "+string(r.State)+
			"; feedback is taken while it is running or accepted")
	case len(r.Feedback) >= task.MaxFeedback:
		return httpapi.Describe(err, task.ErrConflict, "run %s already holds %d feedback reports, the most a run keeps",
			id, len(r.Feedback))
	}
	return httpapi.WithMessage(err, err.Error())
}

// encodeCursor writes c as the opaque cursor of GET /api/v1/runs.
func encodeCursor(c store.RunCursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.FiredAt.UTC().Format(time.RFC3339Nano) + " " + c.TriggerID))
}

// decodeCursor reads a cursor that encodeCursor wrote.
func decodeCursor(s string) (store.RunCursor, error) {
	bad := task.Invalid("cursor", "is not a cursor of this API: pass the `next` of the previous page as it is")
	if len(s) > maxCursorLen {
		return store.RunCursor{}, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.RunCursor{}, bad
	}
	at, id, ok := strings.Cut(string(b), " ")
	if !ok || id == "" {
		return store.RunCursor{}, bad
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return store.RunCursor{}, bad
	}
	return store.RunCursor{FiredAt: t, TriggerID: id}, nil
}

// knownRunState reports whether s is a run state of the ledger.
func knownRunState(s task.RunState) bool {
	for _, n := range runStateNames() {
		if string(s) == n {
			return true
		}
	}
	return false
}

// runStateNames lists the run states, in their life-cycle order.
func runStateNames() []string {
	return []string{string(task.RunPending), string(task.RunRunning), string(task.RunAccepted),
		string(task.RunDone), string(task.RunFailed), string(task.RunDead), string(task.RunRejected),
		string(task.RunTimeout), string(task.RunCancelled), string(task.RunSkipped)}
}
