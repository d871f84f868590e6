package authapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// activeAdmin reports whether u may administer: role admin, not disabled.
func activeAdmin(u *store.User) bool {
	return u.Role == task.RoleAdmin && !u.Disabled
}

// otherActiveAdmins counts the active admins besides name.
func (g *Guard) otherActiveAdmins(ctx context.Context, name string) (int, error) {
	us, err := g.users.ListUsers(ctx)
	if err != nil {
		return 0, fmt.Errorf("count admins: %w", err)
	}
	n := 0
	for _, u := range us {
		if u.Name != name && activeAdmin(u) {
			n++
		}
	}
	return n, nil
}

// errLastAdmin marks lastAdmin's refusals.
var errLastAdmin = errors.New("the last admin")

// lastAdmin is the 409 refusing a change that would leave no active admin.
func lastAdmin(field, what string) error {
	return &lastAdminError{httpapi.CodedErr(http.StatusConflict, task.CodeConflict, field,
		"the last admin cannot %s: make another user an active admin first", what)}
}

// lastAdminError is a lastAdmin refusal: the API error, matching
// errLastAdmin.
type lastAdminError struct{ error }

// Unwrap gives the API error, which the answer is written from.
func (e *lastAdminError) Unwrap() error { return e.error }

// Is makes errors.Is(err, errLastAdmin) true.
func (e *lastAdminError) Is(target error) bool { return target == errLastAdmin }

// updateKeepingAnAdmin applies p unless it would demote or disable the last
// active admin. The caller holds g.admins, so two changes on this node
// cannot each see the other admin and both go through. Another node may
// still change the other admin at the same moment, so the count is taken
// again after the write, and a change that left no active admin is undone
// (both racing changes may be undone; neither leaves the service without
// an admin).
func (g *Guard) updateKeepingAnAdmin(ctx context.Context, p store.UpdateUserParams) (*store.User, error) {
	demote := p.Role != nil && *p.Role != task.RoleAdmin
	disable := p.Disabled != nil && *p.Disabled
	if !demote && !disable {
		return g.users.UpdateUser(ctx, p)
	}
	cur, err := g.users.GetUser(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	if !activeAdmin(cur) {
		return g.users.UpdateUser(ctx, p)
	}
	refusal := lastAdmin("disabled", "be disabled")
	if demote {
		refusal = lastAdmin("role", "be given another role")
	}
	if n, err := g.otherActiveAdmins(ctx, p.Name); err != nil || n == 0 {
		return nil, cmpErr(err, refusal)
	}
	u, err := g.users.UpdateUser(ctx, p)
	if err != nil {
		return nil, err
	}
	if n, err := g.otherActiveAdmins(ctx, p.Name); err != nil || n > 0 {
		return u, err
	}
	undo := store.UpdateUserParams{Name: cur.Name, Role: &cur.Role, Disabled: &cur.Disabled, PasswordHash: &cur.PasswordHash}
	if _, err := g.users.UpdateUser(ctx, undo); err != nil {
		return nil, fmt.Errorf("undo the change of the last admin %q: %w", cur.Name, err)
	}
	return nil, refusal
}

// deleteKeepingAnAdmin deletes the user name unless it is the last active
// admin; the caller holds g.admins. An active admin is first made a viewer
// through updateKeepingAnAdmin, so a delete racing another node's change
// cannot leave no admin either. It returns the user as it was read before
// the deletion (for the audit trail).
func (g *Guard) deleteKeepingAnAdmin(ctx context.Context, name string) (*store.User, error) {
	cur, err := g.users.GetUser(ctx, name)
	if err != nil {
		return nil, err
	}
	if activeAdmin(cur) {
		viewer := task.RoleViewer
		if _, err := g.updateKeepingAnAdmin(ctx, store.UpdateUserParams{Name: name, Role: &viewer}); err != nil {
			if errors.Is(err, errLastAdmin) {
				return nil, lastAdmin("name", "be deleted")
			}
			return nil, err
		}
	}
	if err := g.users.DeleteUser(ctx, name); err != nil {
		return nil, err
	}
	return cur, nil
}

// cmpErr returns err, or def when err is nil.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}
