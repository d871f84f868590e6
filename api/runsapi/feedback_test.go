package runsapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/runsapi"
	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/store"
	"cronsheet/task"
)

// ownerFunc is a runsapi.Feedback that records its calls.
type ownerFunc func(ctx context.Context, p store.FeedbackParams) (*task.Run, error)

func (f ownerFunc) Feedback(ctx context.Context, p store.FeedbackParams) (*task.Run, error) {
	return f(ctx, p)
}

// TestFeedbackGoesToTheOwner: the feedback handler hands the report to
// Deps.Feedback (the run's owner), not to the store, and answers 501
// without one.
func TestFeedbackGoesToTheOwner(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	apitest.WantError(t, b.Do(t, http.MethodPost, "/api/v1/runs/tr-1/feedback", `{"status":0}`),
		http.StatusNotImplemented, "", "feedback is not taken here")

	var got []store.FeedbackParams
	owner := ownerFunc(func(_ context.Context, p store.FeedbackParams) (*task.Run, error) {
		got = append(got, p)
		return &task.Run{TriggerID: p.TriggerID, State: task.RunDone, Feedback: []task.Feedback{p.Feedback}}, nil
	})
	r := gin.New()
	runsapi.New(runsapi.Deps{Store: b.Store, Feedback: owner, Now: func() time.Time { return apitest.FixedNow }}).Register(r)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/runs/tr-1/feedback", strings.NewReader(`{"status":2,"message":"no"}`))
	req.Header.Set("Content-Type", "application/json")
	r.ServeHTTP(rec, req)
	run := apitest.Want[task.Run](t, rec, http.StatusOK)
	if len(got) != 1 || got[0].TriggerID != "tr-1" || got[0].Feedback.Status != 2 || got[0].Feedback.Message != "no" ||
		!got[0].Feedback.At.Equal(apitest.FixedNow) || run.State != task.RunDone {
		t.Errorf("owner got %+v, answer %+v; want the report on tr-1 at the API's clock", got, run)
	}
}
