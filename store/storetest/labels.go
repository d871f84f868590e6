package storetest

import "maps"

// testTargetLabels checks that a target's labels are stored, replaced by
// an update (removed when the update has none) and listed.
func testTargetLabels(b *bundle) {
	tg := sampleTargets()[0]
	tg.Labels = map[string]string{"managed_by": "team-a", "declared_secrets": "$2a$10$x", "团队": "值班"}
	b.createTarget(tg)
	b.sameTarget("GetTarget with labels", b.getTarget(tg.ID), tg)
	list, err := b.s.ListTargets(b.ctx, "", 10)
	b.noErr("ListTargets", err)
	if len(list) != 1 || !maps.Equal(list[0].Labels, tg.Labels) {
		b.t.Errorf("ListTargets labels = %v, want %v", list, tg.Labels)
	}
	upd := *tg
	upd.Labels = map[string]string{"managed_by": "team-b"}
	got, err := b.s.UpdateTarget(b.ctx, &upd, 0)
	b.noErr("UpdateTarget with other labels", err)
	if !maps.Equal(got.Labels, upd.Labels) || !maps.Equal(b.getTarget(tg.ID).Labels, upd.Labels) {
		b.t.Errorf("labels after update = %v, want %v", got.Labels, upd.Labels)
	}
	upd.Labels = nil
	_, err = b.s.UpdateTarget(b.ctx, &upd, 0)
	b.noErr("UpdateTarget without labels", err)
	if l := b.getTarget(tg.ID).Labels; len(l) != 0 {
		b.t.Errorf("labels after an update without them = %v, want none", l)
	}
}

// testFlowLabels checks that a flow's labels are stored, replaced by an
// update and listed.
func testFlowLabels(b *bundle) {
	fs := b.flows()
	f := sampleFlow("nightly")
	f.Labels = map[string]string{"managed_by": "team-a", "团队": "值班"}
	b.noErr("CreateFlow with labels", fs.CreateFlow(b.ctx, f))
	got, err := fs.GetFlow(b.ctx, "nightly")
	b.noErr("GetFlow", err)
	if !maps.Equal(got.Labels, f.Labels) {
		b.t.Errorf("GetFlow labels = %v, want %v", got.Labels, f.Labels)
	}
	got.Labels = map[string]string{"managed_by": "team-b"}
	_, err = fs.UpdateFlow(b.ctx, got, 0)
	b.noErr("UpdateFlow", err)
	list, err := fs.ListFlows(b.ctx, "", 10)
	b.noErr("ListFlows", err)
	if len(list) != 1 || !maps.Equal(list[0].Labels, map[string]string{"managed_by": "team-b"}) {
		b.t.Errorf("ListFlows labels after update = %+v, want managed_by team-b", list)
	}
}
