package storetest

import (
	"errors"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// RunUsers is the conformance test of store.Users: users (unique names,
// validation, update, delete with their credentials) and credentials
// (sessions and tokens: lookup by id, touch, delete, list, expiry).
// newUsers returns a fresh, empty store that the test may use alone.
func RunUsers(t *testing.T, newUsers func(t *testing.T) store.Users) {
	t.Helper()
	t.Run("Users", func(t *testing.T) { usersCase(t, newUsers(t)) })
	t.Run("Credentials", func(t *testing.T) { credentialsCase(t, newUsers(t)) })
}

func usersCase(t *testing.T, s store.Users) {
	ctx := t.Context()
	if n, err := s.CountUsers(ctx); err != nil || n != 0 {
		t.Fatalf("CountUsers on an empty store = %d, %v", n, err)
	}
	created := at(0).Add(123 * time.Microsecond)
	alice := &store.User{Name: "alice", Role: task.RoleAdmin, PasswordHash: "$2a$hash", CreatedAt: created}
	if err := s.AddUser(ctx, alice); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser(ctx, &store.User{Name: "bob", Role: task.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser(ctx, &store.User{Name: "alice", Role: task.RoleViewer}); !errors.Is(err, task.ErrConflict) {
		t.Errorf("AddUser of an existing name = %v, want ErrConflict", err)
	}
	for _, bad := range []*store.User{
		{Name: "", Role: task.RoleViewer},
		{Name: "a b", Role: task.RoleViewer},
		{Name: "carol", Role: "root"},
	} {
		if err := s.AddUser(ctx, bad); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("AddUser(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
	got, err := s.GetUser(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "alice" || got.Role != task.RoleAdmin || got.PasswordHash != "$2a$hash" || got.Disabled ||
		!got.CreatedAt.Equal(created.Truncate(time.Millisecond)) {
		t.Errorf("GetUser(alice) = %+v", got)
	}
	if _, err := s.GetUser(ctx, "nobody"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetUser(nobody) = %v, want ErrNotFound", err)
	}
	editor, hash, yes := task.RoleEditor, "$2a$new", true
	got, err = s.UpdateUser(ctx, store.UpdateUserParams{Name: "bob", Role: &editor, PasswordHash: &hash, Disabled: &yes})
	if err != nil || got.Role != task.RoleEditor || got.PasswordHash != hash || !got.Disabled {
		t.Errorf("UpdateUser(bob) = %+v, %v", got, err)
	}
	if _, err := s.UpdateUser(ctx, store.UpdateUserParams{Name: "nobody", Role: &editor}); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("UpdateUser(nobody) = %v, want ErrNotFound", err)
	}
	root := task.Role("root")
	if _, err := s.UpdateUser(ctx, store.UpdateUserParams{Name: "bob", Role: &root}); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("UpdateUser(bob, root) = %v, want ErrInvalid", err)
	}
	list, err := s.ListUsers(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alice" || list[1].Name != "bob" {
		t.Fatalf("ListUsers = %v, %v; want alice, bob", list, err)
	}
	if n, err := s.CountUsers(ctx); err != nil || n != 2 {
		t.Errorf("CountUsers = %d, %v; want 2", n, err)
	}
	if err := s.DeleteUser(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(ctx, "bob"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("DeleteUser twice = %v, want ErrNotFound", err)
	}
}

func credentialsCase(t *testing.T, s store.Users) {
	ctx := t.Context()
	for _, u := range []string{"alice", "bob"} {
		if err := s.AddUser(ctx, &store.User{Name: u, Role: task.RoleEditor}); err != nil {
			t.Fatal(err)
		}
	}
	tok := &store.Credential{ID: "t1", Kind: store.KindToken, User: "alice", Name: "deploy",
		Role: task.RoleViewer, Hash: "h1", CreatedAt: at(0)}
	sess := &store.Credential{ID: "s1", Kind: store.KindSession, User: "alice", Role: task.RoleEditor,
		Hash: "h2", CreatedAt: at(time.Second), LastUsed: at(time.Second), ExpiresAt: at(time.Hour)}
	bobs := &store.Credential{ID: "s2", Kind: store.KindSession, User: "bob", Role: task.RoleEditor,
		Hash: "h3", CreatedAt: at(2 * time.Second), ExpiresAt: at(2 * time.Hour)}
	for _, c := range []*store.Credential{tok, sess, bobs} {
		if err := s.AddCredential(ctx, c); err != nil {
			t.Fatalf("AddCredential(%s): %v", c.ID, err)
		}
	}
	dup := *tok
	if err := s.AddCredential(ctx, &dup); !errors.Is(err, task.ErrConflict) {
		t.Errorf("AddCredential of an existing id = %v, want ErrConflict", err)
	}
	orphan := *tok
	orphan.ID, orphan.User = "t9", "nobody"
	if err := s.AddCredential(ctx, &orphan); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("AddCredential for a missing user = %v, want ErrNotFound", err)
	}
	for _, bad := range []store.Credential{
		{ID: "", Kind: store.KindToken, User: "alice", Role: task.RoleViewer, Hash: "h"},
		{ID: "x", Kind: "cookie", User: "alice", Role: task.RoleViewer, Hash: "h"},
		{ID: "x", Kind: store.KindToken, User: "alice", Role: "root", Hash: "h"},
		{ID: "x", Kind: store.KindToken, User: "alice", Role: task.RoleViewer},
	} {
		if err := s.AddCredential(ctx, &bad); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("AddCredential(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
	got, err := s.GetCredential(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != store.KindToken || got.User != "alice" || got.Name != "deploy" || got.Role != task.RoleViewer ||
		got.Hash != "h1" || !got.CreatedAt.Equal(at(0)) || !got.LastUsed.IsZero() || !got.ExpiresAt.IsZero() {
		t.Errorf("GetCredential(t1) = %+v", got)
	}
	if err := s.TouchCredential(ctx, "s1", at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetCredential(ctx, "s1"); err != nil || !got.LastUsed.Equal(at(time.Minute)) ||
		!got.ExpiresAt.Equal(at(time.Hour)) {
		t.Errorf("after touch: %+v, %v", got, err)
	}
	if err := s.TouchCredential(ctx, "nope", at(0)); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("TouchCredential(nope) = %v, want ErrNotFound", err)
	}
	ids := func(p store.ListCredentialsParams) []string {
		t.Helper()
		cs, err := s.ListCredentials(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, c := range []struct {
		p    store.ListCredentialsParams
		want string
	}{
		{store.ListCredentialsParams{}, "[t1 s1 s2]"},
		{store.ListCredentialsParams{User: "alice"}, "[t1 s1]"},
		{store.ListCredentialsParams{Kind: store.KindSession}, "[s1 s2]"},
		{store.ListCredentialsParams{User: "alice", Kind: store.KindToken}, "[t1]"},
	} {
		if got := ids(c.p); sprint(got) != c.want {
			t.Errorf("ListCredentials(%+v) = %v, want %s", c.p, got, c.want)
		}
	}
	// Expiry: s1 ends at 1h, s2 at 2h, t1 never.
	if n, err := s.DeleteExpiredCredentials(ctx, at(90*time.Minute)); err != nil || n != 1 {
		t.Errorf("DeleteExpiredCredentials = %d, %v; want 1", n, err)
	}
	if _, err := s.GetCredential(ctx, "s1"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("expired session still there: %v", err)
	}
	// Revoking is immediate: the next lookup misses.
	if err := s.DeleteCredential(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCredential(ctx, "t1"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetCredential after delete = %v, want ErrNotFound", err)
	}
	if err := s.DeleteCredential(ctx, "t1"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("DeleteCredential twice = %v, want ErrNotFound", err)
	}
	// Deleting a user deletes their credentials.
	if err := s.DeleteUser(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCredential(ctx, "s2"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("bob's session after DeleteUser = %v, want ErrNotFound", err)
	}
}

func sprint(ids []string) string {
	out := "["
	for i, id := range ids {
		if i > 0 {
			out += " "
		}
		out += id
	}
	return out + "]"
}
