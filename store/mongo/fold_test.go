package mongo

import (
	"fmt"
	"testing"
	"time"

	"cronsheet/store"
)

func TestFoldStatusesKeepsOrder(t *testing.T) {
	t1, t2 := time.UnixMilli(1000).UTC(), time.UnixMilli(2000).UTC()
	ids, sets := foldStatuses([]store.TaskStatusParams{
		{TaskID: "a", NextFire: t1, LastStatus: "running"},
		{TaskID: "b", Done: true},
		{TaskID: "a", SetNextFire: true, LastFire: t2, LastStatus: "done"},
	})
	if fmt.Sprint(ids) != "[a b]" {
		t.Fatalf("ids = %v, want [a b]", ids)
	}
	// a: the later status clears next_fire and sets last_status; last_fire is added.
	if got := fmt.Sprint(sets[0]); got != `{"next_fire":{"$numberLong":"0"},"last_status":"done","last_fire":{"$numberLong":"2000"}}` {
		t.Errorf("a's $set = %s", got)
	}
	// b: done, and so held by no node.
	if got := fmt.Sprint(sets[1]); got != `{"is_done":{"$numberInt":"1"},"is_claimed":{"$numberInt":"0"},"claimed_by":"","lease_until":{"$numberLong":"0"}}` {
		t.Errorf("b's $set = %s", got)
	}
}
