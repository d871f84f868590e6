package jobsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/api/jobsapi"
	"cronsheet/jobs/jobapi"
	"cronsheet/task"
)

// fakeJobs answers as the jobs service would for the cases below: Submit
// refuses a key held by a different request, Upsert creates under "new"
// and replaces under any other key, Wait counts its calls.
type fakeJobs struct {
	jobsapi.JobsService
	waits int
}

func (f *fakeJobs) Submit(context.Context, jobapi.Request) (*jobapi.View, error) {
	return nil, task.Conflict(task.CodeAlreadyExists, `key: job job_1 holds key "k" and was made by a different request`)
}

func (f *fakeJobs) Upsert(_ context.Context, key string, _ jobapi.Request) (*jobapi.View, error) {
	v := &jobapi.View{ID: "job_2", Created: true}
	if key != "new" {
		v.Replaced = "job_1"
	}
	return v, nil
}

func (f *fakeJobs) Wait(context.Context, string, time.Duration) (*jobapi.View, error) {
	f.waits++
	return &jobapi.View{ID: "job_1"}, nil
}

func serve(t *testing.T, f *fakeJobs, method, path, body string) (int, httpapi.ErrorBody) {
	t.Helper()
	r := gin.New()
	jobsapi.New(jobsapi.Deps{Jobs: f}).Register(r)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
	var e httpapi.ErrorBody
	_ = json.Unmarshal(w.Body.Bytes(), &e)
	return w.Code, e
}

// TestJobAnswers: a key held by a different request is 409 naming key; an
// upsert answers 201 when it created the key's job and 200 when it
// replaced one; a long poll above the maximum wait is 400 naming wait and
// the maximum, and does not wait.
func TestJobAnswers(t *testing.T) {
	f := &fakeJobs{}
	if code, e := serve(t, f, "POST", "/api/v1/jobs", `{"method":"POST","name":"http://h/","key":"k"}`); code != http.StatusConflict ||
		e.Field != "key" || e.Code != task.CodeAlreadyExists {
		t.Errorf("key conflict: %d %+v, want 409 naming key", code, e)
	}
	if code, _ := serve(t, f, "PUT", "/api/v1/jobs/by-key/new", `{"method":"POST","name":"http://h/"}`); code != http.StatusCreated {
		t.Errorf("upsert of a new key: %d, want 201", code)
	}
	if code, _ := serve(t, f, "PUT", "/api/v1/jobs/by-key/old", `{"method":"POST","name":"http://h/"}`); code != http.StatusOK {
		t.Errorf("upsert of a held key: %d, want 200", code)
	}
	for _, q := range []string{"62", "51", "x"} {
		code, e := serve(t, f, "GET", "/api/v1/jobs/job_1?wait="+q, "")
		if code != http.StatusBadRequest || e.Field != "wait" || !strings.Contains(e.Error, "0 to 50 seconds") {
			t.Errorf("wait=%s: %d %+v, want 400 naming wait and its maximum", q, code, e)
		}
	}
	if f.waits != 0 {
		t.Errorf("refused waits reached the service %d times", f.waits)
	}
	if code, _ := serve(t, f, "GET", "/api/v1/jobs/job_1?wait=50", ""); code != http.StatusOK || f.waits != 1 {
		t.Errorf("wait=50: %d, %d waits; want 200 after one wait", code, f.waits)
	}
	if max := time.Duration(task.MaxJobWait) * time.Second; max >= httpapi.WriteTimeout {
		t.Errorf("the longest wait %s does not end before the write timeout %s", max, httpapi.WriteTimeout)
	}
}
