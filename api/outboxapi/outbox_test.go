package outboxapi_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/task"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // tests only; main sets the mode in production
	os.Exit(m.Run())
}

// TestOutboxNamesTasks: each message carries its task's title; a message
// of a task that is gone has none.
func TestOutboxNamesTasks(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	b.AddTitledTask(t, "ob-1", "值班 morning", 1)
	for _, id := range []string{"ob-1", "gone"} {
		if err := b.Store.AddOutbox(t.Context(), &task.OutboxMessage{TaskID: id, TriggerID: "tr-" + id,
			Channel: task.ChannelOutbox, To: "a@example.com", Subject: "s", Body: "b"}); err != nil {
			t.Fatalf("AddOutbox: %v", err)
		}
	}
	type page struct {
		Messages []struct {
			TaskID    string `json:"task_id"`
			TaskTitle string `json:"task_title"`
		} `json:"messages"`
	}
	p := apitest.Want[page](t, b.Do(t, http.MethodGet, "/api/v1/outbox", ""), http.StatusOK)
	got := map[string]string{}
	for _, m := range p.Messages {
		got[m.TaskID] = m.TaskTitle
	}
	if len(got) != 2 || got["ob-1"] != "值班 morning" || got["gone"] != "" {
		t.Errorf("outbox titles = %v, want ob-1 titled 值班 morning and gone untitled", got)
	}
}
