package storetest

import (
	"slices"
	"time"
)

// rowlessCases are the cases of Tasks.RetireRowless; they need the
// driver's raw row delete (WithRawDeleteRow).
func rowlessCases(cfg config) []testCase {
	skip := ""
	if cfg.rawDeleteRow == nil {
		skip = "the driver's test gives no raw row delete (storetest.WithRawDeleteRow)"
	}
	return []testCase{{name: "RetireRowless", skip: skip, fn: func(b *bundle) { testRetireRowless(b, cfg.rawDeleteRow) }}}
}

// testRetireRowless: rows deleted straight in the database leave their
// tasks enabled; RetireRowless(owner) retires exactly owner's claimed
// tasks whose row is gone (disabled, deleted, version bumped), leaves
// the others (row present, another owner's), retires nothing twice, and
// PurgeDeleted removes a retired task once released.
func testRetireRowless(b *bundle, rawDelete RawDeleteRow) {
	lease := at(time.Hour)
	b.addTask(newTask("a1", "ra1"))
	b.addTask(newTask("a2", "ra2"))
	if got := b.claim("node-a", 10, lease); len(got) != 2 {
		b.t.Fatalf("node-a claimed %d tasks, want 2", len(got))
	}
	b.addTask(newTask("b1", "rb1"))
	if got := b.claim("node-b", 10, lease); len(got) != 1 {
		b.t.Fatalf("node-b claimed %d tasks, want 1", len(got))
	}
	before := b.getTask("a1")
	for _, id := range []string{"ra1", "rb1"} {
		if err := rawDelete(b.ctx, b.s, scenario, id); err != nil {
			b.t.Fatalf("raw delete of row %s: %v", id, err)
		}
	}
	if got := b.getTask("a1"); got.IsEnable != 1 {
		b.t.Fatalf("a1 after its row's raw delete: is_enable %d, want 1 (nothing retired it yet)", got.IsEnable)
	}

	ids, err := b.s.RetireRowless(b.ctx, "node-a")
	b.noErr("RetireRowless(node-a)", err)
	if !slices.Equal(ids, []string{"a1"}) {
		b.t.Errorf("RetireRowless(node-a) = %v, want [a1]", ids)
	}
	if got := b.getTask("a1"); got.IsEnable != 0 || got.Version != before.Version+1 {
		b.t.Errorf("a1: is_enable %d version %d, want 0 and %d", got.IsEnable, got.Version, before.Version+1)
	}
	if got := b.getTask("a2"); got.IsEnable != 1 {
		b.t.Errorf("a2 (row present): is_enable %d, want 1", got.IsEnable)
	}
	if got := b.getTask("b1"); got.IsEnable != 1 {
		b.t.Errorf("b1 (node-b's): is_enable %d, want 1 until node-b's pass", got.IsEnable)
	}
	ids, err = b.s.RetireRowless(b.ctx, "node-a")
	b.noErr("RetireRowless(node-a) again", err)
	if len(ids) != 0 {
		b.t.Errorf("RetireRowless(node-a) again = %v, want none", ids)
	}
	ids, err = b.s.RetireRowless(b.ctx, "node-b")
	b.noErr("RetireRowless(node-b)", err)
	if !slices.Equal(ids, []string{"b1"}) {
		b.t.Errorf("RetireRowless(node-b) = %v, want [b1]", ids)
	}
	// Held, a retired task stays until its holder releases it.
	if n, err := b.s.PurgeDeleted(b.ctx); err != nil || n != 0 {
		b.t.Errorf("PurgeDeleted while held = %d, %v; want 0", n, err)
	}
	b.noErr("ReleaseTask a1", b.s.ReleaseTask(b.ctx, "a1", "node-a"))
	if n, err := b.s.PurgeDeleted(b.ctx); err != nil || n != 1 {
		b.t.Errorf("PurgeDeleted after release = %d, %v; want 1 (a1)", n, err)
	}
}
