package storetest

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"cronsheet/store"
	"cronsheet/task"
)

// RunSettings runs the conformance cases of store.SettingsStore: none
// stored is task.ErrNotFound, the first put (ifVersion 0) stores version
// 1 and only once, a put replaces only the version it names, every field
// comes back as written, and of two writers of one version exactly one
// wins.
func RunSettings(t *testing.T, newStore func(t *testing.T) store.Product, opts ...Option) {
	t.Helper()
	cfg := configOf(opts)
	runGroups(t, newStore, []group{
		{"Settings", []testCase{
			{name: "NoneStored", fn: testSettingsNone},
			{name: "SeedOnce", fn: testSettingsSeed},
			{name: "IfVersion", fn: testSettingsIfVersion},
			{name: "ConcurrentWriters", fn: testSettingsRace, skip: cfg.skipConcurrency},
		}},
	})
}

// sampleSettings is a record with every field set.
func sampleSettings() *store.Settings {
	return &store.Settings{HostRate: 2.5, HostBurst: 3,
		Hosts:     map[string]store.HostLimit{"api.example.com": {Rate: 50, Burst: 10}},
		Allow:     []string{"127.0.0.1/32", ".corp.example"},
		Deny:      []string{"10.0.0.0/8"},
		CCGroups:  map[string]int{"billing": 4},
		UpdatedBy: "alice"}
}

func testSettingsNone(b *bundle) {
	if _, err := b.s.GetSettings(b.ctx); !errors.Is(err, task.ErrNotFound) {
		b.t.Fatalf("GetSettings on an empty store: %v, want task.ErrNotFound", err)
	}
	if _, err := b.s.PutSettings(b.ctx, sampleSettings(), 1); !errors.Is(err, task.ErrNotFound) {
		b.t.Fatalf("PutSettings(ifVersion 1) on an empty store: %v, want task.ErrNotFound", err)
	}
}

func testSettingsSeed(b *bundle) {
	want := sampleSettings()
	got, err := b.s.PutSettings(b.ctx, want, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	if got.Version != 1 || got.UpdatedAt.IsZero() || got.UpdatedBy != "alice" {
		b.t.Fatalf("first put: version %d at %v by %q, want version 1, a time, by alice", got.Version, got.UpdatedAt, got.UpdatedBy)
	}
	read, err := b.s.GetSettings(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	sameSettings(b.t, read, want)
	other := &store.Settings{HostRate: 9}
	if _, err := b.s.PutSettings(b.ctx, other, 0); !errors.Is(err, task.ErrConflict) {
		b.t.Fatalf("second seed: %v, want task.ErrConflict", err)
	}
	if read, _ = b.s.GetSettings(b.ctx); read.HostRate != want.HostRate || read.Version != 1 {
		b.t.Fatalf("after a refused seed: rate %v version %d, want %v and 1", read.HostRate, read.Version, want.HostRate)
	}
}

func testSettingsIfVersion(b *bundle) {
	if _, err := b.s.PutSettings(b.ctx, sampleSettings(), 0); err != nil {
		b.t.Fatal(err)
	}
	next := &store.Settings{HostRate: 7, Deny: []string{"::/0"}, UpdatedBy: "bob"}
	got, err := b.s.PutSettings(b.ctx, next, 1)
	if err != nil {
		b.t.Fatal(err)
	}
	if got.Version != 2 || got.HostRate != 7 || got.UpdatedBy != "bob" {
		b.t.Fatalf("put at version 1: version %d rate %v by %q, want 2, 7, bob", got.Version, got.HostRate, got.UpdatedBy)
	}
	if len(got.Hosts) != 0 || len(got.Allow) != 0 || len(got.CCGroups) != 0 {
		b.t.Fatalf("a put replaces the whole record; got hosts %v allow %v cc %v", got.Hosts, got.Allow, got.CCGroups)
	}
	if _, err := b.s.PutSettings(b.ctx, sampleSettings(), 1); !errors.Is(err, task.ErrConflict) {
		b.t.Fatalf("put at stale version 1: %v, want task.ErrConflict", err)
	}
	read, err := b.s.GetSettings(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	if read.Version != 2 || read.HostRate != 7 || !reflect.DeepEqual(read.Deny, []string{"::/0"}) {
		b.t.Fatalf("after a stale put: %+v, want version 2 as bob wrote it", read)
	}
}

// testSettingsRace has eight writers put over version 1 at once: exactly
// one wins, the rest get task.ErrConflict.
func testSettingsRace(b *bundle) {
	if _, err := b.s.PutSettings(b.ctx, sampleSettings(), 0); err != nil {
		b.t.Fatal(err)
	}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		won, lost int
	)
	for i := range 8 {
		wg.Go(func() {
			_, err := b.s.PutSettings(b.ctx, &store.Settings{HostRate: float64(i)}, 1)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, task.ErrConflict):
				lost++
			default:
				b.t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if won != 1 || lost != 7 {
		b.t.Fatalf("8 writers of version 1: %d won, %d lost, want 1 and 7", won, lost)
	}
	if read, err := b.s.GetSettings(b.ctx); err != nil || read.Version != 2 {
		b.t.Fatalf("after the race: %+v, %v; want version 2", read, err)
	}
}

// sameSettings compares the settings' fields (not version or time).
func sameSettings(t *testing.T, got, want *store.Settings) {
	t.Helper()
	g, w := *got, *want.Normalized()
	g.Version, g.UpdatedAt, w.Version = 0, w.UpdatedAt, 0
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("settings read back\n got %+v\nwant %+v", g, w)
	}
}
