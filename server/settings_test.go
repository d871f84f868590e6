package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/admission"
	"cronsheet/config"
	"cronsheet/executors/configured"
	"cronsheet/store"
	"cronsheet/task"
)

// ccCounter is a hook that counts, at the receiver, the most calls in
// flight at once; each call is held answerAfter.
type ccCounter struct {
	inFlight, max atomic.Int32
	mu            sync.Mutex
	calls         int
}

func (h *ccCounter) serve(w http.ResponseWriter, _ *http.Request) {
	n := h.inFlight.Add(1)
	for m := h.max.Load(); n > m && !h.max.CompareAndSwap(m, n); m = h.max.Load() {
	}
	h.mu.Lock()
	h.calls++
	h.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	h.inFlight.Add(-1)
}

// submitCC posts n jobs of cc group "reports" asking limit to url and
// waits until each is done.
func submitCC(t *testing.T, b *testBundle, url string, n, limit int) {
	t.Helper()
	batch := make([]map[string]any, n)
	for i := range batch {
		batch[i] = map[string]any{"method": "POST", "name": url, "cc": map[string]any{"group": "reports", "limit": limit}}
	}
	var items []struct {
		Job *jobView `json:"job"`
	}
	if code := b.call(t, "POST", "/api/v1/jobs", batch, &items); code != http.StatusOK || len(items) != n {
		t.Fatalf("batch: status %d, %d answers", code, len(items))
	}
	for _, it := range items {
		b.waitJob(t, it.Job.ID, task.JobDone)
	}
}

// TestSettingsCCGroupLimit: the live settings' cc group limit takes the
// place of the limit the jobs ask, and changes without a restart. The
// config seeds the group's limit at 2 (GET shows it); the API then sets
// it to 1, and jobs asking 4 never run two at once at the hook.
func TestSettingsCCGroupLimit(t *testing.T) {
	h := &ccCounter{}
	srv := httptest.NewServer(http.HandlerFunc(h.serve))
	defer srv.Close()
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Flow.CCGroups = map[string]int{"reports": 2}
	})
	var cur store.Settings
	if code := b.call(t, "GET", "/api/v1/settings", nil, &cur); code != http.StatusOK || cur.CCGroups["reports"] != 2 ||
		cur.UpdatedBy != "config" || len(cur.Allow) != 1 {
		t.Fatalf("seeded settings: %d %+v, want the config's (reports: 2, allow 127.0.0.0/8)", code, cur)
	}
	body := map[string]any{"version": cur.Version, "allow": cur.Allow, "cc_groups": map[string]int{"reports": 1}}
	if code := b.call(t, "PUT", "/api/v1/settings", body, &cur); code != http.StatusOK || cur.CCGroups["reports"] != 1 {
		t.Fatalf("PUT settings: %d %+v", code, cur)
	}
	submitCC(t, b, srv.URL+"/cc", 8, 4)
	if m := h.max.Load(); m != 1 {
		t.Fatalf("%d calls of group reports ran at once; the settings limit it to 1", m)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.calls != 8 {
		t.Fatalf("%d calls at the hook, want 8: none dropped, none repeated", h.calls)
	}
}

// heldSettings is the node's store whose GetSettings, while hold is set,
// reads the settings, says which version it read on read, and answers
// only once release is closed: a poll that read a version before the
// next one was stored and applied.
type heldSettings struct {
	store.SettingsStore
	hold    atomic.Bool
	read    chan int64
	release chan struct{}
}

func (h *heldSettings) GetSettings(ctx context.Context) (*store.Settings, error) {
	s, err := h.SettingsStore.GetSettings(ctx)
	if err != nil || !h.hold.Load() {
		return s, err
	}
	h.read <- s.Version
	<-h.release
	return s, nil
}

// TestSettingsPollNeverAppliesAnOlderVersion: a poll that read version N
// answers after N+1 was stored and applied (as the settings API applies
// what it stored); the node keeps N+1, its cc group limit and host rate
// included, rather than going back to N until the next poll.
func TestSettingsPollNeverAppliesAnOlderVersion(t *testing.T) {
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Flow.CCGroups = map[string]int{"reports": 2}
	})
	// A liveSettings of its own over the node's store, so that the
	// node's own poll does not touch what is checked.
	held := &heldSettings{SettingsStore: b.srv.store, read: make(chan int64, 1), release: make(chan struct{})}
	adm, err := admission.New(admission.Config{})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	execs, err := configured.New(logger, b.srv.store, b.srv.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer execs.Close()
	l := &liveSettings{logger: logger, store: held, admission: adm, execs: execs}
	if err := l.seed(t.Context(), b.srv.cfg); err != nil {
		t.Fatal(err)
	}
	old := l.current()

	held.hold.Store(true)
	polled := make(chan error, 1)
	go func() { polled <- l.pollOnce(t.Context()) }()
	if v := <-held.read; v != old.Version {
		t.Fatalf("the poll read version %d, want %d", v, old.Version)
	}
	next, err := b.srv.store.PutSettings(t.Context(), &store.Settings{Allow: old.Allow, HostRate: 5,
		CCGroups: map[string]int{"reports": 1}, UpdatedBy: "test"}, old.Version)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.apply(next); err != nil {
		t.Fatal(err)
	}
	close(held.release)
	if err := <-polled; err != nil {
		t.Fatalf("poll: %v", err)
	}

	if got := l.current().Version; got != next.Version {
		t.Errorf("applied version %d after the late poll, want %d (the newer one)", got, next.Version)
	}
	if n := l.ccLimit("reports", 9); n != 1 {
		t.Errorf("cc group reports limited to %d, want 1 (version %d's)", n, next.Version)
	}
	if r := adm.Limit("example.com").Rate; r != 5 {
		t.Errorf("host rate %v, want 5 (version %d's)", r, next.Version)
	}
}
