package targetsapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/task"
)

const targetsPath = "/api/v1/targets"

// targetsPage is the answer of GET /api/v1/targets.
type targetsPage struct {
	Targets   []task.Target `json:"targets"`
	NextAfter string        `json:"next_after"`
}

const hookBody = `{"id":"hook","name":"the hook","kind":"http","state":"running","feedback_timeout":60,
	"http":{"method":"POST","url":"https://example.com/hook/{{task_id}}","headers":{"X-Token":"{{token}}"}}}`

func TestTargetLifecycle(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)

	rec := b.Do(t, http.MethodGet, targetsPath, "")
	if got := apitest.Want[targetsPage](t, rec, http.StatusOK); len(got.Targets) != 0 || !strings.Contains(rec.Body.String(), `"targets":[]`) {
		t.Errorf("empty list = %s", rec.Body)
	}

	rec = b.Do(t, http.MethodPost, targetsPath, hookBody)
	hook := apitest.Want[task.Target](t, rec, http.StatusCreated)
	if hook.ID != "hook" || hook.Version != 1 || hook.State != task.TargetRunning || hook.FeedbackTimeout != 60 ||
		hook.HTTP == nil || hook.HTTP.Headers["X-Token"] != "{{token}}" || hook.CreatedAt.IsZero() {
		t.Errorf("created = %+v", hook)
	}
	if loc, etag := rec.Header().Get("Location"), rec.Header().Get("ETag"); loc != targetsPath+"/hook" || etag != `"1"` {
		t.Errorf("Location %q, ETag %q", loc, etag)
	}

	t.Run("DefaultStatePreset", func(t *testing.T) {
		got := apitest.Want[task.Target](t, b.Do(t, http.MethodPost, targetsPath,
			`{"id":"jobs","kind":"exec","exec":{"command":"backup"}}`), http.StatusCreated)
		if got.State != task.TargetPreset {
			t.Errorf("state = %q, want preset", got.State)
		}
	})

	t.Run("CreateConflict", func(t *testing.T) {
		apitest.WantError(t, b.Do(t, http.MethodPost, targetsPath, hookBody), http.StatusConflict, "", `target "hook" already exists`)
	})

	t.Run("Get", func(t *testing.T) {
		got := apitest.Want[task.Target](t, b.Do(t, http.MethodGet, targetsPath+"/hook", ""), http.StatusOK)
		if got.ID != "hook" || got.Name != "the hook" || got.HTTP.URL != "https://example.com/hook/{{task_id}}" {
			t.Errorf("got %+v", got)
		}
		apitest.WantError(t, b.Do(t, http.MethodGet, targetsPath+"/nope", ""), http.StatusNotFound, "", `target "nope" not found`)
		apitest.WantError(t, b.Do(t, http.MethodGet, targetsPath+"/"+strings.Repeat("x", 600), ""), http.StatusBadRequest, "id", "longer than")
	})

	t.Run("Put", func(t *testing.T) {
		paused := strings.Replace(hookBody, `"running"`, `"paused"`, 1)
		rec := b.Do(t, http.MethodPut, targetsPath+"/hook", paused, "If-Match", `"1"`)
		got := apitest.Want[task.Target](t, rec, http.StatusOK)
		if got.State != task.TargetPaused || got.Version != 2 || rec.Header().Get("ETag") != `"2"` {
			t.Errorf("after PUT: %+v, ETag %s", got, rec.Header().Get("ETag"))
		}
		// A stale version is refused; nothing changes.
		stale := b.Do(t, http.MethodPut, targetsPath+"/hook", hookBody, "If-Match", `"1"`)
		apitest.WantError(t, stale, http.StatusConflict, "", `target "hook" changed since you loaded it (you sent version 1); reload and try again`)
		apitest.WantCode(t, stale, task.CodeVersionConflict)
		// A GET answer goes back as it is; its version is the If-Match.
		cur := b.Do(t, http.MethodGet, targetsPath+"/hook", "").Body.String()
		apitest.WantError(t, b.Do(t, http.MethodPut, targetsPath+"/hook", strings.Replace(cur, `"version":2`, `"version":1`, 1)),
			http.StatusConflict, "", "reload and try again")
		cur = strings.Replace(cur, `"name":"the hook"`, `"name":"renamed"`, 1)
		got = apitest.Want[task.Target](t, b.Do(t, http.MethodPut, targetsPath+"/hook", cur), http.StatusOK)
		if got.Name != "renamed" || got.Version != 3 || got.State != task.TargetPaused {
			t.Errorf("after round trip: %+v", got)
		}
		// Without a version the PUT replaces unconditionally.
		got = apitest.Want[task.Target](t, b.Do(t, http.MethodPut, targetsPath+"/hook", hookBody), http.StatusOK)
		if got.Version != 4 || got.State != task.TargetRunning {
			t.Errorf("after unconditional PUT: %+v", got)
		}
		apitest.WantError(t, b.Do(t, http.MethodPut, targetsPath+"/nope", strings.Replace(hookBody, `"hook"`, `"nope"`, 1)),
			http.StatusNotFound, "", `target "nope" not found`)
	})

	t.Run("Delete", func(t *testing.T) {
		apitest.Want[any](t, b.Do(t, http.MethodDelete, targetsPath+"/jobs", ""), http.StatusNoContent)
		apitest.WantError(t, b.Do(t, http.MethodDelete, targetsPath+"/jobs", ""), http.StatusNotFound, "", `target "jobs" not found`)
		apitest.WantError(t, b.Do(t, http.MethodGet, targetsPath+"/jobs", ""), http.StatusNotFound, "", "not found")
	})
}

func TestTargetInputErrors(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)
	apitest.Want[task.Target](t, b.Do(t, http.MethodPost, targetsPath, hookBody), http.StatusCreated)
	http1 := func(url string) string {
		return `{"id":"h2","kind":"http","http":{"method":"GET","url":"` + url + `"}}`
	}
	tests := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		field, msg               string
	}{
		{"NoID", http.MethodPost, targetsPath, `{"kind":"exec","exec":{"command":"backup"}}`, nil, 400, "id", "required"},
		{"BadID", http.MethodPost, targetsPath, `{"id":"a b","kind":"exec","exec":{"command":"backup"}}`, nil, 400, "id", "letters"},
		{"ReservedID", http.MethodPost, targetsPath, `{"id":"http","kind":"exec","exec":{"command":"backup"}}`, nil, 400, "id", "reserved"},
		{"BadKind", http.MethodPost, targetsPath, `{"id":"x","kind":"pigeon"}`, nil, 400, "kind", "must be one of"},
		{"BadState", http.MethodPost, targetsPath, `{"id":"x","kind":"email","state":"on"}`, nil, 400, "state", "preset, running or paused"},
		{"BadFeedbackTimeout", http.MethodPost, targetsPath, `{"id":"x","kind":"email","feedback_timeout":-1}`, nil, 400, "feedback_timeout", "0 to"},
		{"FeedbackTimeoutType", http.MethodPost, targetsPath, `{"id":"x","kind":"email","feedback_timeout":"soon"}`, nil, 400, "feedback_timeout", "must be a whole number"},
		{"MissingKindObject", http.MethodPost, targetsPath, `{"id":"x","kind":"http"}`, nil, 400, "http", "required"},
		{"OtherKindObject", http.MethodPost, targetsPath, `{"id":"x","kind":"email","exec":{"command":"backup"}}`, nil, 400, "exec", "only allowed"},
		{"BadMethod", http.MethodPost, targetsPath, `{"id":"x","kind":"http","http":{"method":"PUT","url":"https://a.example/"}}`, nil, 400, "http.method", "GET or POST"},
		{"BadURL", http.MethodPost, targetsPath, http1("ftp://a.example/"), nil, 400, "http.url", "http://"},
		{"BadTemplate", http.MethodPost, targetsPath, http1("https://a.example/{{x"), nil, 400, "http.url", "not closed"},
		{"CheckTargetField", http.MethodPost, targetsPath, `{"id":"x","kind":"exec","exec":{"command":"rm"}}`, nil, 400, "exec.command", "not a command listed"},
		{"CheckTargetPlain", http.MethodPost, targetsPath, http1("https://blocked.example/"), nil, 400, "http", "blocked.example is not allowed"},
		{"BuiltinNeedsTasks", http.MethodPost, targetsPath, `{"id":"x","kind":"builtin","builtin":{"action":"pause_task"}}`, nil, 400, "builtin.tasks", "at least one"},
		{"UnknownField", http.MethodPost, targetsPath, `{"id":"x","kind":"email","colour":"red"}`, nil, 400, "colour", "unknown field"},
		{"UnknownNestedField", http.MethodPost, targetsPath, `{"id":"x","kind":"http","http":{"verb":"GET"}}`, nil, 400, "verb", "unknown field"},
		{"NestedType", http.MethodPost, targetsPath, `{"id":"x","kind":"http","http":{"method":"GET","url":"https://a.example/","timeout":"1m"}}`, nil, 400, "http.timeout", "must be a whole number"},
		{"EmptyBody", http.MethodPost, targetsPath, "", nil, 400, "body", "empty body"},
		{"NotObject", http.MethodPost, targetsPath, `"x"`, nil, 400, "body", "must be a JSON object"},
		{"BadJSON", http.MethodPost, targetsPath, `{"id":`, nil, 400, "body", "invalid JSON"},
		{"TooBig", http.MethodPost, targetsPath, `{"id":"x","name":"` + strings.Repeat("n", 300<<10) + `"}`, nil, 413, "body", "larger than"},
		{"PutIDChange", http.MethodPut, targetsPath + "/hook", strings.Replace(hookBody, `"hook"`, `"other"`, 1), nil, 400, "id", "cannot change"},
		{"PutBadIfMatch", http.MethodPut, targetsPath + "/hook", hookBody, []string{"If-Match", "v1"}, 400, "If-Match", "positive integer"},
		{"PutBadVersion", http.MethodPut, targetsPath + "/hook", strings.Replace(hookBody, `{"id"`, `{"version":"two","id"`, 1), nil, 400, "version", "positive integer"},
		{"PutVersionDisagrees", http.MethodPut, targetsPath + "/hook", strings.Replace(hookBody, `{"id"`, `{"version":2,"id"`, 1),
			[]string{"If-Match", `"1"`}, 400, "version", "If-Match says 1"},
		{"PutInvalid", http.MethodPut, targetsPath + "/hook", `{"kind":"http","state":"running","http":{"method":"GET","url":""}}`, nil, 400, "http.url", "required"},
		{"PutNoState", http.MethodPut, targetsPath + "/hook", `{"kind":"exec","exec":{"command":"backup"}}`, nil, 400, "state", "preset, running or paused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, b.Do(t, tt.method, tt.path, tt.body, tt.headers...), tt.status, tt.field, tt.msg)
		})
	}
	// Nothing refused was stored, and the target kept its version.
	got := apitest.Want[targetsPage](t, b.Do(t, http.MethodGet, targetsPath, ""), http.StatusOK)
	if len(got.Targets) != 1 || got.Targets[0].Version != 1 {
		t.Errorf("targets = %+v, want hook alone at version 1", got.Targets)
	}
}

func TestListTargets(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)
	for i := range 5 {
		apitest.Want[task.Target](t, b.Do(t, http.MethodPost, targetsPath,
			fmt.Sprintf(`{"id":"t%d","kind":"email","state":"running"}`, i)), http.StatusCreated)
	}
	var seen []string
	after := ""
	for range 4 {
		p := apitest.Want[targetsPage](t, b.Do(t, http.MethodGet, targetsPath+"?limit=2&after="+after, ""), http.StatusOK)
		for _, tg := range p.Targets {
			seen = append(seen, tg.ID)
		}
		if p.NextAfter == "" {
			break
		}
		after = p.NextAfter
	}
	if got := strings.Join(seen, ","); got != "t0,t1,t2,t3,t4" {
		t.Errorf("paged ids = %s, want t0..t4 once each", got)
	}
	for _, q := range []string{"limit=0", "limit=501", "limit=x"} {
		apitest.WantError(t, b.Do(t, http.MethodGet, targetsPath+"?"+q, ""), http.StatusBadRequest, "limit", "from 1 to 500")
	}
	apitest.WantError(t, b.Do(t, http.MethodGet, targetsPath+"?after="+strings.Repeat("a", 600), ""), http.StatusBadRequest, "after", "longer than")
}
