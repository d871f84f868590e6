package jobs

import (
	"sync"
	"testing"

	"cronsheet/task"
)

// TestParallelUpsertsOfOneKey: 20 upserts of one key at once all succeed:
// exactly one creates the key's job, each of the others replaces the job
// that held the key before it (every job but the last is replaced exactly
// once), and exactly one pending job is left, the key's holder. On both
// drivers (testStore).
func TestParallelUpsertsOfOneKey(t *testing.T) {
	ctx := t.Context()
	svc := New(Deps{Store: testStore(t), Trigger: noTrigger})
	defer svc.Close()
	const n = 20
	var (
		wg    sync.WaitGroup
		views [n]*View
		errs  [n]error
		start = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			views[i], errs[i] = svc.Upsert(ctx, "shared", jobRequest("http://127.0.0.1:9/u", ""))
		})
	}
	close(start)
	wg.Wait()
	created := 0
	replaced := map[string]int{}
	ids := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Errorf("upsert %d: %v; want every upsert to succeed", i, errs[i])
			continue
		}
		ids[views[i].ID] = true
		if views[i].Replaced == "" {
			created++
		} else {
			replaced[views[i].Replaced]++
		}
	}
	if created != 1 {
		t.Errorf("%d upserts created the key's job, want exactly 1", created)
	}
	holder, err := svc.store.JobByKey(ctx, "shared")
	if err != nil {
		t.Fatalf("the key's holder: %v", err)
	}
	for id := range ids {
		want := 1
		if id == holder.TaskID {
			want = 0 // the last one
		}
		if replaced[id] != want {
			t.Errorf("job %s was replaced %d times, want %d", id, replaced[id], want)
		}
		if v, err := svc.Get(ctx, id); want == 1 && (err != nil || v.State != task.JobCancelled) {
			t.Errorf("replaced job %s reads %+v, %v; want cancelled", id, v, err)
		}
	}
	pending, _, err := svc.List(ctx, ListQuery{State: task.JobPending, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].ID != holder.TaskID {
		t.Errorf("%d pending jobs after the upserts (%v), want exactly the key's holder %s", len(pending), ids, holder.TaskID)
	}
}
