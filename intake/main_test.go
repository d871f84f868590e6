package intake

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"cronsheet/fire"
	"cronsheet/jobs"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newService returns a jobs service over a real SQLite store, both closed
// at cleanup.
func newService(t *testing.T) *jobs.Service {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cronsheet.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	svc := jobs.New(jobs.Deps{
		Logger: testLogger(t),
		Store:  st,
		Trigger: func(context.Context, fire.TriggerParams) ([]*task.Run, error) {
			return nil, errors.New("no triggers in intake tests")
		},
	})
	t.Cleanup(svc.Close)
	return svc
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testContext bounds a test that talks over the network; it is a safety
// net against a hang, not a timing assertion.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Requests used by every channel's test.
const (
	validRequest   = `{"method":"GET","name":"http://example.com/hook","delay":60}`
	unknownField   = `{"method":"GET","name":"http://example.com/hook","colour":"red"}`
	missingMethod  = `{"name":"http://example.com/hook","delay":60}`
	waitingRequest = `{"method":"GET","name":"http://example.com/hook","wait":5}`
)

// wantRefusal returns the error and field the HTTP API's path
// (jobs.ParseRequest, then jobs.Build) gives for body.
func wantRefusal(t *testing.T, body string) (msg, field string) {
	t.Helper()
	req, err := jobs.ParseRequest([]byte(body))
	if err == nil {
		_, err = jobs.Build(req, jobs.NewID(), time.Now())
	}
	var ve *task.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%s: want a validation error from ParseRequest/Build, got %v", body, err)
	}
	return ve.Error(), ve.Field
}
