package taskdoc

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/task"
)

// TestJobEncoding: a job's document has the same field names in JSON
// (SQLite) and BSON (MongoDB), empty fields left out, and reads back to
// the same task.Job.
func TestJobEncoding(t *testing.T) {
	j := &task.Job{Method: task.JobPOST, Name: "https://example.com/cb", Key: "k",
		DueAt: time.UnixMilli(1_700_000_000_123).UTC()}
	b, err := json.Marshal(JobOf(j))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"method":"POST","name":"https://example.com/cb","key":"k","due_at":1700000000123}`
	if string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	raw, err := bson.Marshal(JobOf(j))
	if err != nil {
		t.Fatal(err)
	}
	var m bson.D
	if err := bson.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range m {
		keys = append(keys, e.Key)
	}
	if want := []string{"method", "name", "key", "due_at"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("BSON keys = %v, want %v", keys, want)
	}
	var back Job
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Job(); !reflect.DeepEqual(got, j) {
		t.Errorf("read back %+v, want %+v", got, j)
	}
	if JobOf(nil) != nil || (*Job)(nil).Job() != nil {
		t.Error("nil does not stay nil")
	}
}
