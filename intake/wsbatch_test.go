package intake

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coder/websocket"

	"cronsheet/task"
)

// wsBatchMsg is a batch answer as a client reads it.
type wsBatchMsg struct {
	Type string `json:"type"`
	Seq  int    `json:"seq"`
	Jobs []struct {
		Index int `json:"index"`
		Job   *struct {
			ID    string        `json:"id"`
			State task.JobState `json:"state"`
		} `json:"job"`
		Error string `json:"error"`
		Field string `json:"field"`
	} `json:"jobs"`
}

// TestWebSocketBatch: the WebSocket takes the batch shapes POST
// /api/v1/jobs takes, a JSON array and {"jobs": [...]}, and answers each
// job on its own: a bad job is refused with its field while the others
// are stored, and an accepted job's result follows when it is final.
func TestWebSocketBatch(t *testing.T) {
	t.Parallel()
	b := setupWebSocket(t)
	conn := dial(t, b)
	ctx := testContext(t)

	send := func(body string) wsBatchMsg {
		t.Helper()
		if err := conn.Write(ctx, websocket.MessageText, []byte(body)); err != nil {
			t.Fatalf("write: %v", err)
		}
		_, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var m wsBatchMsg
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("decode %s: %v", data, err)
		}
		return m
	}
	got := send("[" + validRequest + "," + missingMethod + "," + validRequest + "]")
	if got.Type != "batch" || got.Seq != 1 || len(got.Jobs) != 3 {
		t.Fatalf("array batch: got %+v, want batch seq 1 with 3 answers", got)
	}
	wantMsg, wantField := wantRefusal(t, missingMethod)
	if it := got.Jobs[1]; it.Index != 1 || it.Job != nil || it.Error != wantMsg || it.Field != wantField {
		t.Errorf("bad job: got %+v, want error %q field %q", it, wantMsg, wantField)
	}
	for _, i := range []int{0, 2} {
		it := got.Jobs[i]
		if it.Index != i || it.Job == nil || it.Job.State != task.JobPending || it.Error != "" {
			t.Fatalf("job %d: got %+v, want a pending job", i, it)
		}
		if _, err := b.svc.Get(context.Background(), it.Job.ID); err != nil {
			t.Errorf("job %d (%s) not stored: %v", i, it.Job.ID, err)
		}
	}

	wrapped := send(`{"jobs":[` + validRequest + `]}`)
	if wrapped.Type != "batch" || wrapped.Seq != 2 || len(wrapped.Jobs) != 1 || wrapped.Jobs[0].Job == nil {
		t.Fatalf("wrapped batch: got %+v, want batch seq 2 with one job", wrapped)
	}

	// The first job's result reaches the connection when it is final.
	id := got.Jobs[0].Job.ID
	if _, err := b.svc.Cancel(context.Background(), id); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	res := readMsg(t, conn)
	if res.Type != "result" || res.Job == nil || res.Job.ID != id || res.Job.State != task.JobCancelled {
		t.Errorf("after cancel: got %+v, want the cancelled job's result", res)
	}

	// A batch that cannot be read is one error naming the field, in words.
	bad := exchange(t, conn, `[{"method":"GET","name":"http://example.com/hook","delay":true}]`)
	if bad.Type != "error" || bad.Seq != 3 || bad.Field != "jobs[0].delay" || bad.Error != "jobs[0].delay: must be a number; got true or false" {
		t.Errorf("wrong-typed batch: got %+v, want error seq 3 \"jobs[0].delay: must be a number; got true or false\"", bad)
	}
}
