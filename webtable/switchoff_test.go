package webtable_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/task"
	"cronsheet/webtable"
)

// recordingSyncer records the rows it is asked to sync and fails with err.
type recordingSyncer struct {
	mu   sync.Mutex
	rows []task.Row
	err  error
}

func (s *recordingSyncer) SyncRow(_ context.Context, row *task.Row) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = append(s.rows, *row)
	return s.err
}

// TestSwitchOffSyncsTheRowBeforeTheAnswer: a PATCH that switches a row
// off has the row, as saved (its new version), synced before it is
// answered; one that leaves it active does not. When that sync fails the
// edit stays and is answered 200 (the sync patrol finishes it).
func TestSwitchOffSyncsTheRowBeforeTheAnswer(t *testing.T) {
	t.Parallel()
	st := apitest.OpenStore(t)
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	syncer := &recordingSyncer{err: errors.New("store down")}
	r := gin.New()
	webtable.New(webtable.Deps{Store: st, Scenarios: map[string]*mapping.Scenario{"memos": memos}, Sync: syncer}).Register(r)
	const path = "/api/v1/scenarios/memos/rows"
	apitest.Want[task.Row](t, apitest.Do(t, r, http.MethodPost, path, `{"memo_id":"m1","content":"x","when":"every 1h"}`),
		http.StatusCreated)
	apitest.Want[task.Row](t, apitest.Do(t, r, http.MethodPatch, path+"/m1", `{"content":"y"}`), http.StatusOK)
	if len(syncer.rows) != 0 {
		t.Fatalf("an edit that leaves the row active synced %d rows, want none (the patrol's)", len(syncer.rows))
	}
	off := apitest.Want[task.Row](t, apitest.Do(t, r, http.MethodPatch, path+"/m1", `{"active":0}`), http.StatusOK)
	syncer.mu.Lock()
	defer syncer.mu.Unlock()
	if len(syncer.rows) != 1 || syncer.rows[0].ID != "m1" || syncer.rows[0].Version != off.Version {
		t.Fatalf("synced %+v, want row m1 at version %d once", syncer.rows, off.Version)
	}
	saved, err := st.GetRow(t.Context(), "memos", "m1")
	if err != nil || saved.Version != off.Version || saved.IsFetched != 0 {
		t.Errorf("row after a failed sync = %+v, %v; want the edit kept, unfetched for the patrol", saved, err)
	}
}
