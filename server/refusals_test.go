package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// refusal is the part of a 4xx answer the refusal tests read.
type refusal struct {
	Error string `json:"error"`
	Field string `json:"field"`
	Lines []struct {
		Line  int    `json:"line"`
		Field string `json:"field"`
		Error string `json:"error"`
	} `json:"lines"`
}

// wantRefused sends body and wants a 400 naming field.
func (b *testBundle) wantRefused(t *testing.T, method, path, body, field string) refusal {
	t.Helper()
	code, answer := b.raw(t, method, path, body)
	var r refusal
	_ = json.Unmarshal([]byte(answer), &r)
	if code != http.StatusBadRequest || r.Field != field {
		t.Errorf("%s %s %q = %d %s, want 400 naming %s", method, path, body, code, answer, field)
	}
	return r
}

// TestDoorsRefuseBadIDsHeadersAndNUL: a row id of only dots or with a
// slash or a control character, a line break in a field that becomes a
// mail header (title, to, alert_to, a subject), and a NUL anywhere are
// refused with a 400 naming the field, through every door to the same
// data: the rows API (create, patch, batch), the CSV import, the tasks
// API, the jobs API and its WebSocket.
func TestDoorsRefuseBadIDsHeadersAndNUL(t *testing.T) {
	b := setup(t, nil)
	const rows = "/api/v1/scenarios/memos/rows"
	const inject = `hi\r\nBcc: evil@example.com`

	for _, id := range []string{"..", ".", "...", "a/b", `a\u0001b`, `a\u0000b`} {
		b.wantRefused(t, "POST", rows, `{"memo_id":"`+id+`","content":"x","when":"every 1h"}`, "memo_id")
	}
	for _, method := range []string{"GET", "PATCH", "DELETE"} {
		if code, answer := b.raw(t, method, rows+"/%2e%2e", `{"content":"y"}`); code != http.StatusNotFound {
			t.Errorf("%s …/rows/%%2e%%2e = %d %s, want 404 (no such row can exist)", method, code, answer)
		}
	}
	for field, body := range map[string]string{
		"title":    `{"content":"x","when":"every 1h","title":"` + inject + `"}`,
		"to":       `{"content":"x","when":"every 1h","to":"a@example.com\r\nBcc: evil@example.com"}`,
		"alert_to": `{"content":"x","when":"every 1h","alert_to":"a@example.com\nBcc: evil@example.com"}`,
		"params":   `{"content":"x","when":"every 1h","params":"{\"title\":\"hi\\r\\nBcc: evil@example.com\"}"}`,
		"content":  `{"content":"x\u0000y","when":"every 1h"}`,
		"colour":   `{"content":"x","when":"every 1h","colour":"red\u0000"}`,
	} {
		b.wantRefused(t, "POST", rows, body, field)
	}

	// PATCH and the batch of an existing row.
	if code, answer := b.raw(t, "POST", rows, `{"memo_id":"ok1","content":"x","when":"every 1h"}`); code != http.StatusCreated {
		t.Fatalf("create ok1 = %d %s", code, answer)
	}
	b.wantRefused(t, "PATCH", rows+"/ok1", `{"title":"`+inject+`"}`, "title")
	b.wantRefused(t, "PATCH", rows+"/ok1", `{"content":"a\u0000"}`, "content")
	code, answer := b.raw(t, "POST", rows+"/batch", `{"rows":[{"id":"ok1","fields":{"title":"`+inject+`"}}]}`)
	if code < 400 || code >= 500 || !strings.Contains(answer, `"field":"title"`) {
		t.Errorf("batch with a CRLF title = %d %s, want a 4xx naming title", code, answer)
	}

	// The CSV import names the line and the field.
	for name, csv := range map[string]string{
		"NUL":   "memo_id,content,when\nc1,ok,every 1h\nc2,bad\x00,every 1h\n",
		"CRLF":  "memo_id,content,when,title\nc2,ok,every 1h,\"hi\r\nBcc: evil@example.com\"\n",
		"DotID": "memo_id,content,when\n..,ok,every 1h\n",
	} {
		code, answer := b.rawAs(t, "POST", "/api/v1/scenarios/memos/import", "text/csv", csv)
		var r refusal
		_ = json.Unmarshal([]byte(answer), &r)
		if code != http.StatusBadRequest || len(r.Lines) == 0 || r.Lines[0].Field == "" || r.Lines[0].Line < 2 {
			t.Errorf("import %s = %d %s, want 400 naming the line and field", name, code, answer)
		}
	}
	if code, answer := b.raw(t, "GET", rows+"/c1", ""); code != http.StatusNotFound {
		t.Errorf("a refused import stored c1: %d %s", code, answer)
	}

	// The tasks API's manual trigger and the jobs API (HTTP and WebSocket).
	b.wantRefused(t, "POST", "/api/v1/tasks/ok1/trigger", `{"params":{"title":"`+inject+`"}}`, "params.title")
	b.wantRefused(t, "POST", "/api/v1/tasks/ok1/trigger", `{"params":{"note":"a\u0000"}}`, "params.note")
	mail := `{"method":"MAIL_TO","name":"a@example.com","delay":3600,"params":"{\"subject\":\"hi\\r\\nBcc: evil@example.com\",\"body\":\"x\"}"}`
	b.wantRefused(t, "POST", "/api/v1/jobs", mail, "params.title")
	wsAnswer := b.wsExchange(t, mail)
	if !strings.Contains(wsAnswer, `"type":"error"`) || !strings.Contains(wsAnswer, `"field":"params.title"`) {
		t.Errorf("WebSocket MAIL_TO with a CRLF subject = %s, want an error naming params.title", wsAnswer)
	}
}

// wsExchange sends one message on the jobs WebSocket and returns the answer.
func (b *testBundle) wsExchange(t *testing.T, msg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.base, "http")+"/api/v1/jobs/ws", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.CloseNow()
	if err := conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
	_, data, err := conn.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(data)
}
