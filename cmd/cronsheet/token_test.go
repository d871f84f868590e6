package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// TestTokenCreateRoleAtMostUsers: `cronsheet token
// create` refuses a token role above its user's, naming role, and stores
// nothing; the user's own role is made.
func TestTokenCreateRoleAtMostUsers(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.AddUser(ctx, &store.User{Name: "vera", Role: task.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	cio := cliIO{out: &out, err: &errs}
	err = tokenCreate(ctx, st, cmdFlags{user: "vera", name: "ci", role: "admin"}, cio)
	if err == nil || !strings.Contains(err.Error(), "role") {
		t.Errorf("token create --role admin for a viewer: %v, want an error naming role", err)
	}
	if err := tokenCreate(ctx, st, cmdFlags{user: "vera", name: "ro", role: "viewer"}, cio); err != nil {
		t.Errorf("token create --role viewer for a viewer: %v", err)
	}
	ts, err := st.ListCredentials(ctx, store.ListCredentialsParams{User: "vera", Kind: store.KindToken})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Role != task.RoleViewer {
		t.Errorf("vera's tokens = %+v, want the one viewer token", ts)
	}
}
