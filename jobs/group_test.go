package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// testStore opens an empty store of the test driver:
// CRONSHEET_TEST_DRIVER=mongo runs on CRONSHEET_TEST_MONGO_URI, anything
// else on SQLite. It is closed (and on MongoDB dropped) when t ends.
func testStore(t *testing.T) Store {
	t.Helper()
	if os.Getenv("CRONSHEET_TEST_DRIVER") == "mongo" {
		uri := mongotest.URI(t, "the jobs service tests on the mongo driver")
		s, err := mongo.Open(t.Context(), mongo.Config{URI: uri, Database: mongotest.TempDatabase(t, uri, "cronsheet_jobs_")})
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cronsheet.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// countingStore counts the store's create calls and the size of each
// CreateJobs call; while gate is set, the first CreateJobs call after it
// waits (having said so on entered) until gate is closed.
type countingStore struct {
	Store
	mu      sync.Mutex
	sizes   []int // of each CreateJobs call
	singles int   // CreateJob calls
	gate    chan struct{}
	entered chan struct{}
}

func (c *countingStore) CreateJobs(ctx context.Context, ts []*task.Task, evs []store.JobEvent) ([]error, error) {
	c.mu.Lock()
	c.sizes = append(c.sizes, len(ts))
	gate, entered := c.gate, c.entered
	c.gate, c.entered = nil, nil
	c.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
	}
	return c.Store.CreateJobs(ctx, ts, evs)
}

func (c *countingStore) CreateJob(ctx context.Context, t *task.Task) error {
	c.mu.Lock()
	c.singles++
	c.mu.Unlock()
	return c.Store.CreateJob(ctx, t)
}

// hold makes the next CreateJobs call wait until the returned release is
// called; entered is closed once it waits.
func (c *countingStore) hold() (entered chan struct{}, release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gate := make(chan struct{})
	c.gate, c.entered = gate, make(chan struct{})
	return c.entered, sync.OnceFunc(func() { close(gate) })
}

// calls returns the sizes of the CreateJobs calls so far and the count of
// CreateJob calls, and forgets them.
func (c *countingStore) calls() ([]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sizes, singles := c.sizes, c.singles
	c.sizes, c.singles = nil, 0
	return sizes, singles
}

// jobRequest is a POST job to name due in a day (it does not fire during
// the test), holding key when not "".
func jobRequest(name, key string) Request {
	day := float64(24 * 60 * 60)
	return Request{Method: "POST", Name: name, Delay: &day, Key: key}
}

// TestSubmitGroupCommit: single submissions made while a group commit of
// creates is being written queue up and are written together, each
// answered on its own — a job per plain request, one job for three
// requests with one key (the first stores it, the others get it back as
// an idempotent repeat), the job already holding a key, a validation
// error — and the store holds exactly those jobs. With groups bounded to
// 5, the queue is written in groups of 5, each by one of its own callers.
func TestSubmitGroupCommit(t *testing.T) {
	for _, max := range []int{maxCreateGroup, 5} {
		t.Run(fmt.Sprintf("max=%d", max), func(t *testing.T) { testSubmitGroupCommit(t, max) })
	}
}

func testSubmitGroupCommit(t *testing.T, max int) {
	ctx := t.Context()
	st := &countingStore{Store: testStore(t)}
	svc := New(Deps{Store: st, Trigger: func(context.Context, fire.TriggerParams) ([]*task.Run, error) {
		return nil, errors.New("no trigger in this test")
	}})
	defer svc.Close()
	if svc.creates == nil {
		t.Fatalf("the service does not group creates on %T", st.Store)
	}
	svc.creates.max = max
	t.Logf("store %T", st.Store)
	pre, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/pre", "kpre"))
	if err != nil || !pre.Created {
		t.Fatalf("Submit of the job holding kpre: %+v, %v", pre, err)
	}
	if sizes, singles := st.calls(); !slices.Equal(sizes, []int{1}) || singles != 0 {
		t.Fatalf("one Submit made CreateJobs calls of %v and %d CreateJob calls; want [1] and 0", sizes, singles)
	}

	// A first submission holds the writer in its store call.
	entered, release := st.hold()
	defer release()
	first := make(chan error, 1)
	go func() {
		_, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/first", ""))
		first <- err
	}()
	<-entered

	const plain, dups = 20, 3
	type answer struct {
		v   *View
		err error
	}
	// A repeat under a key is the same request (key_test.go: a different
	// one is refused).
	reqs := []Request{jobRequest("http://127.0.0.1:9/pre", "kpre"), {Method: "BOGUS", Name: "x"}}
	for range dups {
		reqs = append(reqs, jobRequest("http://127.0.0.1:9/dup", "dup"))
	}
	for i := range plain {
		reqs = append(reqs, jobRequest(fmt.Sprintf("http://127.0.0.1:9/plain/%d", i), ""))
	}
	answers := make([]answer, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() {
			v, err := svc.Submit(ctx, r)
			answers[i] = answer{v, err}
		})
	}
	// Every create queues behind the held one: the plain ones and the
	// three with the new key (kpre's holder is found before, the bad one
	// refused before).
	deadline := time.Now().Add(time.Minute)
	for svc.creates.pending() < plain+dups {
		if time.Now().After(deadline) {
			t.Fatalf("%d creates queued after a minute, want %d", svc.creates.pending(), plain+dups)
		}
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("the first Submit: %v", err)
	}

	sizes, singles := st.calls()
	want := []int{1}
	for left := plain + dups; left > 0; left -= min(left, max) {
		want = append(want, min(left, max))
	}
	if !slices.Equal(sizes, want) || singles != 0 {
		t.Errorf("CreateJobs calls of %v and %d CreateJob calls; want %v and 0", sizes, singles, want)
	}

	if a := answers[0]; a.err != nil || a.v.Created || a.v.ID != pre.ID {
		t.Errorf("Submit with kpre again: %+v, %v; want job %s, not created", a.v, a.err, pre.ID)
	}
	var ve *task.ValidationError
	if a := answers[1]; a.v != nil || !errors.As(a.err, &ve) || ve.Field != "method" {
		t.Errorf("Submit of a bad method: %+v, %v; want a validation error of field method", a.v, a.err)
	}
	var dupID string
	created := 0
	for _, a := range answers[2 : 2+dups] {
		if a.err != nil {
			t.Fatalf("Submit with key dup: %v", a.err)
		}
		if a.v.Created {
			created++
			dupID = a.v.ID
		}
	}
	if created != 1 {
		t.Fatalf("%d of %d submissions with key dup created a job, want 1", created, dups)
	}
	for _, a := range answers[2 : 2+dups] {
		if a.v.ID != dupID || a.v.Key != "dup" {
			t.Errorf("Submit with key dup answered job %s key %q, want %s", a.v.ID, a.v.Key, dupID)
		}
	}
	wantIDs := []string{pre.ID, dupID}
	for i, a := range answers[2+dups:] {
		if a.err != nil || !a.v.Created || a.v.Name != reqs[2+dups+i].Name || a.v.State != task.JobPending {
			t.Errorf("plain Submit %d: %+v, %v; want a new pending job of its own", i, a.v, a.err)
			continue
		}
		wantIDs = append(wantIDs, a.v.ID)
	}

	listed, err := st.ListJobs(ctx, store.ListJobsParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	names := map[string]string{}
	for _, tk := range listed {
		got = append(got, tk.TaskID)
		names[tk.TaskID] = tk.Job.Name
	}
	var firstID string
	for id, name := range names {
		if name == "http://127.0.0.1:9/first" {
			firstID = id
		}
	}
	wantIDs = append(wantIDs, firstID)
	slices.Sort(got)
	slices.Sort(wantIDs)
	if firstID == "" || !slices.Equal(got, wantIDs) {
		t.Errorf("the store holds jobs %v, want %v (first %q)", got, wantIDs, firstID)
	}
	for i, a := range answers[2+dups:] {
		if a.v != nil && names[a.v.ID] != reqs[2+dups+i].Name {
			t.Errorf("job %s stored with name %q, want %q", a.v.ID, names[a.v.ID], reqs[2+dups+i].Name)
		}
	}
	if h, err := st.JobByKey(ctx, "dup"); err != nil || h.TaskID != dupID {
		t.Errorf("JobByKey(dup) = %v, %v; want job %s", h, err, dupID)
	}
}
