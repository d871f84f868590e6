package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"cronsheet/internal/testwait"
)

// liveSettings is the part of GET /api/v1/settings this test reads.
type liveSettings struct {
	Version int64    `json:"version"`
	Allow   []string `json:"allow"`
}

// putSettings replaces the settings through base at version, failing the
// test on any error, and returns the stored version.
func putSettings(t *testing.T, base string, version int64, body map[string]any) int64 {
	t.Helper()
	body["version"] = version
	var got liveSettings
	mustCall(t, "PUT", base+"/api/v1/settings", body, &got)
	return got.Version
}

// TestClusterLiveSettings: settings changed through node A's API apply on
// node B, a separate process on the same SQLite file, within 5 s. First a
// host rate limit: jobs due 5 s after the change are delivered by B one
// a second (its four deliveries after the 5 s span at least 2 s at the
// hook; unlimited, they come within milliseconds). Then the allow list:
// B accepts a target calling the hook before the change and refuses one
// within 5 s after it.
func TestClusterLiveSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	c := startCluster(t, 2, 0)
	a, b := c.nodes[0], c.nodes[1]
	var seeded liveSettings
	getJSON(t, a.base()+"/api/v1/settings", &seeded)
	if seeded.Version != 1 || len(seeded.Allow) != 1 || seeded.Allow[0] != "127.0.0.0/8" {
		t.Fatalf("seeded settings %+v, want version 1 allowing 127.0.0.0/8 (the config's)", seeded)
	}

	v := putSettings(t, a.base(), seeded.Version, map[string]any{"allow": []string{"127.0.0.0/8"},
		"hosts": map[string]any{"127.0.0.1": map[string]any{"rate": 1, "burst": 1}}})
	changed := time.Now()
	// Jobs due 5 s after the change, through both nodes so that both
	// arm some.
	for _, n := range c.nodes {
		batch := make([]map[string]any, 30)
		for i := range batch {
			batch[i] = map[string]any{"method": "POST", "name": c.hook.srv.URL + "/j",
				"delay": (5*time.Second - time.Since(changed)).Seconds(), "params": fmt.Sprintf(`{"n":%d}`, i)}
		}
		mustCall(t, "POST", n.base()+"/api/v1/jobs", batch, nil)
	}
	fromB := func() []time.Time {
		var out []time.Time
		for _, d := range c.hook.all() {
			if d.Sender == b.incarnation() && !d.Arrived.Before(changed.Add(5*time.Second)) {
				out = append(out, d.Arrived)
			}
		}
		return out
	}
	testwait.For(t, time.Minute, "4 deliveries from node B after the 5 s", func() bool { return len(fromB()) >= 4 })
	got := fromB()
	// At 1 a second with a burst of 1, the 4th leaves 3 s after the 1st;
	// 2 s leaves a second for the network between sender and hook.
	if span := got[3].Sub(got[0]); span < 2*time.Second {
		t.Fatalf("node B's first 4 deliveries after the change span %v, want ≥ 2s under 1 call a second: "+
			"B did not apply the rate limit set through A", span)
	}

	// The allow list: B accepts a target at the hook, then refuses one
	// once A's change reaches it.
	target := func(id string) (int, error) {
		return callJSON(context.Background(), "POST", b.base()+"/api/v1/targets", map[string]any{"id": id, "kind": "http",
			"state": "running", "http": map[string]any{"method": "POST", "url": c.hook.srv.URL + "/t"}}, nil)
	}
	if code, err := target("before"); err != nil {
		t.Fatalf("node B refused a target at the allowed hook: %d %v", code, err)
	}
	putSettings(t, a.base(), v, map[string]any{"allow": []string{}, "deny": []string{"127.0.0.1/32"}})
	tries := 0
	var last error
	testwait.For(t, 5*time.Second, "node B to refuse the hook's host", func() bool {
		tries++
		code, err := target(fmt.Sprintf("after%d", tries))
		last = err
		return code == http.StatusBadRequest
	})
	if !strings.Contains(last.Error(), "refused") {
		t.Fatalf("node B's refusal %v does not say the host is refused", last)
	}
}
