package fullapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

func TestReadEndpoints(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	ctx := context.Background()

	// A row synced into its task, as the sync patrol would do it.
	row := apitest.Want[task.Row](t, b.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"memo_id":"t1","title":"hi","content":"body","when":"every 1h"}`), http.StatusCreated)
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	tk, err := memos.ToTask(&row, apitest.FixedNow)
	if err != nil {
		t.Fatalf("ToTask: %v", err)
	}
	err = b.Store.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: "t1", RowVersion: row.Version,
		Task: tk, IsActive: task.RowActive, Now: apitest.FixedNow})
	if err != nil {
		t.Fatalf("ApplySync: %v", err)
	}
	for i := range 3 {
		r := &task.Run{TriggerID: fmt.Sprintf("tr%d", i), TaskID: "t1", Slot: apitest.FixedNow.Add(time.Duration(i) * time.Hour),
			TriggerType: task.TriggerSchedule, State: task.RunDone}
		if _, err := b.Store.InsertRun(ctx, r); err != nil {
			t.Fatalf("InsertRun: %v", err)
		}
		m := &task.OutboxMessage{TaskID: "t1", TriggerID: r.TriggerID, Channel: task.ChannelOutbox, Body: "b"}
		if err := b.Store.AddOutbox(ctx, m); err != nil {
			t.Fatalf("AddOutbox: %v", err)
		}
	}

	t.Run("Task", func(t *testing.T) {
		got := apitest.Want[task.Task](t, b.Do(t, http.MethodGet, "/api/v1/tasks/t1", ""), http.StatusOK)
		if got.TaskID != "t1" || got.CronPara != "every 1h" || got.RowID != "t1" {
			t.Errorf("task = %+v", got)
		}
		apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/tasks/nope", ""), http.StatusNotFound, "", `task "nope" not found`)
	})

	t.Run("Runs", func(t *testing.T) {
		type runs struct {
			Runs []task.Run `json:"runs"`
		}
		got := apitest.Want[runs](t, b.Do(t, http.MethodGet, "/api/v1/runs?task_id=t1&limit=2", ""), http.StatusOK)
		if len(got.Runs) != 2 || got.Runs[0].TriggerID != "tr2" || got.Runs[1].TriggerID != "tr1" {
			t.Errorf("runs = %+v, want tr2, tr1", got.Runs)
		}
		before := apitest.FixedNow.Add(time.Hour).Format(time.RFC3339)
		got = apitest.Want[runs](t, b.Do(t, http.MethodGet, "/api/v1/runs?task_id=t1&before="+before, ""), http.StatusOK)
		if len(got.Runs) != 1 || got.Runs[0].TriggerID != "tr0" {
			t.Errorf("runs before %s = %+v, want tr0", before, got.Runs)
		}
		rec := b.Do(t, http.MethodGet, "/api/v1/runs?task_id=none", "")
		if apitest.Want[runs](t, rec, http.StatusOK); !strings.Contains(rec.Body.String(), `"runs":[]`) {
			t.Errorf("no runs = %s, want runs []", rec.Body)
		}
		apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/runs?before="+before, ""), http.StatusBadRequest, "task_id", "required")
		if got = apitest.Want[runs](t, b.Do(t, http.MethodGet, "/api/v1/runs", ""), http.StatusOK); len(got.Runs) != 3 {
			t.Errorf("every run = %+v, want 3 (run queries come from the store)", got.Runs)
		}
		apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/runs?task_id=t1&before=yesterday", ""),
			http.StatusBadRequest, "before", "RFC 3339")
		apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/runs?task_id=t1&limit=900", ""),
			http.StatusBadRequest, "limit", "from 1 to 500")
	})

	t.Run("Outbox", func(t *testing.T) {
		type outbox struct {
			Messages []task.OutboxMessage `json:"messages"`
		}
		got := apitest.Want[outbox](t, b.Do(t, http.MethodGet, "/api/v1/outbox?limit=2", ""), http.StatusOK)
		if len(got.Messages) != 2 || got.Messages[0].ID <= got.Messages[1].ID {
			t.Fatalf("messages = %+v, want the 2 newest, newest first", got.Messages)
		}
		older := apitest.Want[outbox](t, b.Do(t, http.MethodGet,
			fmt.Sprintf("/api/v1/outbox?before=%d", got.Messages[1].ID), ""), http.StatusOK)
		if len(older.Messages) != 1 || older.Messages[0].ID >= got.Messages[1].ID {
			t.Errorf("older messages = %+v, want 1", older.Messages)
		}
		apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/outbox?before=-1", ""), http.StatusBadRequest, "before", "positive")
	})

	t.Run("StoreFailureIs500", func(t *testing.T) {
		if err := b.Store.Close(); err != nil {
			t.Fatal(err)
		}
		apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/tasks/t1", ""), http.StatusInternalServerError, "", "internal error")
		logs := b.Logs.String()
		// Only the 500 is logged as a failure, none of the 4xx before it.
		cause := map[string]string{"sqlite": "database is closed", "mongo": "client is disconnected"}[apitest.Driver()]
		if n := strings.Count(logs, `"msg":"request failed"`); n != 1 || !strings.Contains(logs, cause) {
			t.Errorf("want exactly the 500 logged with its cause, got %d failures:\n%s", n, logs)
		}
	})
}
