package mongo_test

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/task"
)

// BenchmarkStorageSize fills a database with 2,000 memo rows (a title, a
// sentence of content, a schedule, a recipient), their tasks and ten runs
// per task, then reports what the server says each costs, per document:
// data bytes (collStats size / count) and index bytes (totalIndexSize /
// count) of rows, time_task and runs:
//
//	CRONSHEET_TEST_MONGO_URI=mongodb://127.0.0.1:PORT/ \
//	  go test -run '^$' -bench StorageSize -benchtime 1x ./store/mongo/
//
// On FerretDB the numbers are PostgreSQL's relation sizes (JSONB rows and
// its expression indexes), not WiredTiger's.
func BenchmarkStorageSize(b *testing.B) {
	const n, runsPer = 2000, 10
	s := openTemp(b, testURI(b))
	ctx := b.Context()
	slot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("m-%06d", i)
		row := &task.Row{Scenario: "memos", ID: id, IsActive: 1, Fields: map[string]any{
			"memo_id": id, "title": fmt.Sprintf("stand-up reminder %d", i),
			"content": "Stand up, stretch, drink some water and look out of the window.",
			"when":    "weekdays 09:30", "channel": "email", "to": "someone@example.com", "active": 1}}
		if err := s.InsertRow(ctx, row); err != nil {
			b.Fatal(err)
		}
		err := s.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: id, RowVersion: 1,
			Task: benchTask(id, id), IsActive: 1, Now: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		for j := range runsPer {
			at := slot.Add(time.Duration(j) * time.Hour)
			r := &task.Run{TriggerID: fmt.Sprintf("%s-%d", id, j), TaskID: id, Target: "email", Slot: at,
				TriggerType: task.TriggerSchedule, State: task.RunDone, Attempt: 1, Node: "node-a",
				FiredAt: at, FinishedAt: at.Add(300 * time.Millisecond), Output: "sent to someone@example.com"}
			if _, err := s.InsertRun(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.PrepareRowTable(ctx, "memos", []string{"memo_id", "title", "when", "channel", "to", "active"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, coll := range []string{"rows", "time_task", "runs"} {
			var st struct {
				Count          int64   `bson:"count"`
				Size           float64 `bson:"size"`
				TotalIndexSize float64 `bson:"totalIndexSize"`
			}
			c := mongo.Collection(s, coll)
			if err := c.Database().RunCommand(ctx, bson.D{{Key: "collStats", Value: coll}}).Decode(&st); err != nil {
				b.Fatal(err)
			}
			if st.Count == 0 {
				b.Fatalf("collStats %s: count 0", coll)
			}
			b.ReportMetric(st.Size/float64(st.Count), coll+"-B/doc")
			b.ReportMetric(st.TotalIndexSize/float64(st.Count), coll+"-index-B/doc")
		}
	}
}
