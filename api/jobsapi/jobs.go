package jobsapi

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/jobs/jobapi"
	"cronsheet/store"
	"cronsheet/task"
)

// The jobs API (design notes 002/003, docs/SEEDS.md):
//
//	POST   /api/v1/jobs                  one job → 201 {id, state, …} (200 when its key named a job made by
//	                                     the same request; 409 naming key when that job's request differs),
//	                                     or with "wait" the job once final (or when the wait ends);
//	                                     a JSON array or {"jobs": [...]} → 200 [{index, job | error, field}]
//	GET    /api/v1/jobs/:id?wait=N       the job with its runs and transitions; wait = long poll (≤ 50 s,
//	                                     task.MaxJobWait, below the server's write timeout; more → 400)
//	DELETE /api/v1/jobs/:id              cancel → 200; 409 when it already fired
//	PUT    /api/v1/jobs/by-key/:key      upsert: 201 when the key is new; 200 when a job held it (a pending
//	                                     one is cancelled and replaced; "replaced" names it)
//	POST   /api/v1/jobs/:id/block        never runs while blocked
//	POST   /api/v1/jobs/:id/unblock
//	POST   /api/v1/jobs/backfill         {ids} or {state: dead|cancelled, limit} → 202 {accepted, refused, rate};
//	                                     each job is taken once (duplicate ids collapse); a job an earlier
//	                                     backfill queued or re-runs is in refused with the reason, never run twice
//	GET    /api/v1/jobs?state=&method=&name=&q=&cursor=&limit=
//	                                     jobs by state (dead letters: state=dead, the default), newest
//	                                     first; method, name (a substring) and q (a substring of the
//	                                     name or key, any case) narrow it
//	GET    /api/v1/jobs/dead.jsonl       every dead job as JSON lines
//
// Errors are {"error", "field"} like the rest of the API; every intake
// channel shares jobapi.ParseRequest and jobapi.Build, so the messages are the
// same on HTTP, WebSocket and Kafka.

// batchItem is one answer of a batch submission.
type batchItem struct {
	Index int          `json:"index"`
	Job   *jobapi.View `json:"job,omitempty"`
	Error string       `json:"error,omitempty"`
	Field string       `json:"field,omitempty"`
}

func (a *API) noJobs(c *gin.Context) bool {
	if a.jobs != nil {
		return false
	}
	httpapi.NotImplemented(c, "the jobs API is not available on this server")
	return true
}

// maxBatchBytes bounds a submission's body, one job or a batch: the
// limit jobapi.ParseBatch applies, enforced while reading, so a larger body
// is a 413 before it is read whole.
const maxBatchBytes = jobapi.MaxRequestBytes

func (a *API) submitJobs(c *gin.Context) {
	if a.noJobs(c) {
		return
	}
	body, err := httpapi.ReadBody(c, maxBatchBytes)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, `{"jobs"`) {
		a.submitBatch(c, []byte(trimmed))
		return
	}
	req, err := jobapi.ParseRequest(body)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	v, err := a.jobs.Submit(c.Request.Context(), req)
	if err != nil {
		a.WriteError(c, keyConflict(err))
		return
	}
	status := http.StatusCreated
	if !v.Created {
		status = http.StatusOK
	}
	c.Header("Location", "/api/v1/jobs/"+v.ID)
	c.JSON(status, v)
}

// submitBatch answers each job of a batch on its own: one bad job does not
// stop the others.
func (a *API) submitBatch(c *gin.Context, body []byte) {
	reqs, err := jobapi.ParseBatch(body)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	results, err := a.jobs.SubmitBatch(c.Request.Context(), reqs)
	if err != nil {
		a.WriteError(c, err) // the store failed: say so for the whole batch
		return
	}
	out := make([]batchItem, len(results))
	for i, r := range results {
		out[i] = batchItem{Index: i, Job: r.View}
		var ve *task.ValidationError
		switch {
		case r.Err == nil:
		case errors.As(r.Err, &ve):
			out[i].Error, out[i].Field = ve.Error(), ve.Field
		case errors.Is(r.Err, task.ErrConflict) || errors.Is(r.Err, task.ErrInvalid):
			out[i].Error = r.Err.Error()
			if isKeyConflict(r.Err) {
				out[i].Field = "key"
			}
		default:
			a.WriteError(c, r.Err)
			return
		}
	}
	c.JSON(http.StatusOK, out)
}

// isKeyConflict reports whether err is the jobs service's refusal of a
// key that a job made by a different request holds.
func isKeyConflict(err error) bool {
	return errors.Is(err, task.ErrConflict) && task.CodeOf(err) == task.CodeAlreadyExists
}

// keyConflict answers a key held by a job made by a different request as
// a 409 naming the field key; other errors are returned as they are.
func keyConflict(err error) error {
	if !isKeyConflict(err) {
		return err
	}
	return httpapi.CodedErr(http.StatusConflict, task.CodeAlreadyExists, "key", "%s", err.Error())
}

// waitParam reads ?wait=seconds.
func waitParam(c *gin.Context) (time.Duration, error) {
	s := c.Query("wait")
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, task.Invalid("wait", "must be a number: 0 to %d seconds; got %q", task.MaxJobWait, task.Truncate(s, 40))
	}
	return jobapi.WaitSeconds(f)
}

func (a *API) getJob(c *gin.Context) {
	if a.fixedPath(c) || a.noJobs(c) {
		return
	}
	wait, err := waitParam(c)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	id := c.Param("id")
	v, err := a.jobs.Wait(c.Request.Context(), id, wait)
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "job %q not found", task.Truncate(id, 100)))
		return
	}
	c.JSON(http.StatusOK, v)
}

func (a *API) cancelJob(c *gin.Context) {
	if a.fixedPath(c) || a.noJobs(c) {
		return
	}
	id := c.Param("id")
	v, err := a.jobs.Cancel(c.Request.Context(), id)
	if err != nil {
		if errors.Is(err, task.ErrConflict) {
			err = httpapi.WithMessage(err, err.Error())
		}
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "job %q not found", task.Truncate(id, 100)))
		return
	}
	a.RecordChange(c, store.AuditKindJob, id, store.AuditCancel, nil)
	c.JSON(http.StatusOK, v)
}

func (a *API) upsertJob(c *gin.Context) {
	if a.noJobs(c) {
		return
	}
	body, err := httpapi.ReadBody(c, jobapi.MaxRequestBytes)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	req, err := jobapi.ParseRequest(body)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	v, err := a.jobs.Upsert(c.Request.Context(), c.Param("key"), req)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	status := http.StatusCreated // the key was new
	if v.Replaced != "" {
		status = http.StatusOK // the key existed: its job was replaced
	}
	c.Header("Location", "/api/v1/jobs/"+v.ID)
	c.JSON(status, v)
}

func (a *API) blockJob(c *gin.Context) {
	if !a.noJobs(c) {
		a.jobState(c, store.AuditBlock, a.jobs.Block)
	}
}

func (a *API) unblockJob(c *gin.Context) {
	if !a.noJobs(c) {
		a.jobState(c, store.AuditUnblock, a.jobs.Unblock)
	}
}

func (a *API) jobState(c *gin.Context, action string, fn func(ctx context.Context, id string) (*jobapi.View, error)) {
	id := c.Param("id")
	v, err := fn(c.Request.Context(), id)
	if err != nil {
		if errors.Is(err, task.ErrConflict) {
			err = httpapi.WithMessage(err, err.Error())
		}
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "job %q not found", task.Truncate(id, 100)))
		return
	}
	a.RecordChange(c, store.AuditKindJob, id, action, nil)
	c.JSON(http.StatusOK, v)
}

func (a *API) backfillJobs(c *gin.Context) {
	if a.noJobs(c) {
		return
	}
	var req jobapi.BackfillRequest
	if err := httpapi.ReadJSON(c, &req, false); err != nil {
		a.WriteError(c, err)
		return
	}
	ans, err := a.jobs.Backfill(c.Request.Context(), req)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	a.RecordChange(c, store.AuditKindJob, "backfill", store.AuditBackfill, map[string]any{"accepted": len(ans.Accepted), "refused": len(ans.Refused)})
	c.JSON(http.StatusAccepted, ans)
}

// jobsPage is the answer of GET /api/v1/jobs.
type jobsPage struct {
	Jobs []*jobapi.View `json:"jobs"`
	Next string         `json:"next"`
}

// listQuery reads state, method, name, q, cursor and limit of GET
// /api/v1/jobs.
func listQuery(c *gin.Context) (jobapi.ListQuery, error) {
	q := jobapi.ListQuery{State: task.JobState(c.DefaultQuery("state", string(task.JobDead))),
		Method: task.JobMethod(strings.ToUpper(c.Query("method"))), Name: c.Query("name"), Q: strings.TrimSpace(c.Query("q"))}
	if len(q.Name) > httpapi.MaxQueryLen {
		return q, task.Invalid("name", "at most %d bytes", httpapi.MaxQueryLen)
	}
	if len(q.Q) > httpapi.MaxQueryLen {
		return q, task.Invalid("q", "at most %d bytes", httpapi.MaxQueryLen)
	}
	if s := c.Query("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > jobapi.MaxBackfill {
			return q, task.Invalid("limit", "must be 1 to %d", jobapi.MaxBackfill)
		}
		q.Limit = n
	}
	if s := c.Query("cursor"); s != "" {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		ms, id, ok := strings.Cut(string(raw), "|")
		n, perr := strconv.ParseInt(ms, 10, 64)
		if err != nil || !ok || perr != nil {
			return q, task.Invalid("cursor", "not a cursor this API gave")
		}
		q.Cursor = store.RunCursor{FiredAt: store.FromUnixMS(n), TriggerID: id}
	}
	return q, nil
}

func jobCursor(c store.RunCursor) string {
	if c.TriggerID == "" && c.FiredAt.IsZero() {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(store.UnixMS(c.FiredAt), 10) + "|" + c.TriggerID))
}

func (a *API) listJobs(c *gin.Context) {
	if a.noJobs(c) {
		return
	}
	q, err := listQuery(c)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	views, next, err := a.jobs.List(c.Request.Context(), q)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	if views == nil {
		views = []*jobapi.View{}
	}
	c.JSON(http.StatusOK, jobsPage{Jobs: views, Next: jobCursor(next)})
}

// exportDead streams every dead job as JSON lines.
func (a *API) exportDead(c *gin.Context) {
	if a.noJobs(c) {
		return
	}
	c.Header("Content-Type", "application/x-ndjson")
	c.Header("Content-Disposition", `attachment; filename="dead-jobs.jsonl"`)
	c.Status(http.StatusOK)
	w := bufio.NewWriter(c.Writer)
	enc := json.NewEncoder(w)
	q := jobapi.ListQuery{State: task.JobDead, Limit: 500}
	for {
		views, next, err := a.jobs.List(c.Request.Context(), q)
		if err != nil {
			a.Logger().ErrorContext(c.Request.Context(), "export dead jobs", "error", err)
			return // the status is sent: the short file says it
		}
		for _, v := range views {
			if err := enc.Encode(v); err != nil {
				return
			}
		}
		if next == (store.RunCursor{}) {
			break
		}
		q.Cursor = next
	}
	_ = w.Flush()
}
