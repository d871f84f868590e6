package auth_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronsheet/auth"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

func TestPassword(t *testing.T) {
	t.Parallel()
	h, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !auth.CheckPassword(h, "correct horse") || auth.CheckPassword(h, "wrong horse") || auth.CheckPassword("", "") {
		t.Error("CheckPassword does not tell right from wrong")
	}
	var ve *task.ValidationError
	if _, err := auth.HashPassword("short"); !errors.As(err, &ve) || ve.Field != "password" {
		t.Errorf("HashPassword(short) = %v, want a password validation error", err)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := st.AddUser(ctx, &store.User{Name: "alice", Role: task.RoleEditor}); err != nil {
		t.Fatal(err)
	}
	c, value, err := auth.NewCredential(store.KindToken, "alice", "ci", task.RoleViewer, now)
	if err != nil {
		t.Fatal(err)
	}
	c.ExpiresAt = now.Add(time.Hour)
	if err := st.AddCredential(ctx, c); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Hash, value) || !strings.HasPrefix(value, auth.TokenPrefix) {
		t.Fatalf("value %q, hash %q", value, c.Hash)
	}
	got, u, err := auth.Verify(ctx, st, store.KindToken, value, now)
	if err != nil || got.ID != c.ID || u.Name != "alice" {
		t.Fatalf("Verify = %v, %v, %v", got, u, err)
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(value, auth.TokenPrefix), ".")
	for name, v := range map[string]string{
		"wrong secret": auth.TokenPrefix + id + ".AAAA",
		"session kind": auth.SessionPrefix + strings.TrimPrefix(value, auth.TokenPrefix),
		"garbage":      "hello",
		"unknown id":   auth.TokenPrefix + "nope.secret",
	} {
		if _, _, err := auth.Verify(ctx, st, store.KindToken, v, now); !errors.Is(err, auth.ErrBadCredential) {
			t.Errorf("%s: Verify = %v, want ErrBadCredential", name, err)
		}
	}
	if _, _, err := auth.Verify(ctx, st, store.KindToken, value, now.Add(time.Hour)); !errors.Is(err, auth.ErrBadCredential) {
		t.Errorf("expired: Verify = %v, want ErrBadCredential", err)
	}
	yes := true
	if _, err := st.UpdateUser(ctx, store.UpdateUserParams{Name: "alice", Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := auth.Verify(ctx, st, store.KindToken, value, now); !errors.Is(err, auth.ErrBadCredential) {
		t.Errorf("disabled user: Verify = %v, want ErrBadCredential", err)
	}
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := auth.NewLimiter(auth.LimiterConfig{Free: 3, Base: time.Second, MaxDelay: 4 * time.Second,
		Window: time.Hour, Now: func() time.Time { return now }})
	for i := range 2 {
		l.Fail("u:alice")
		if w := l.Wait("u:alice"); w != 0 {
			t.Fatalf("after %d failures: wait %v, want 0", i+1, w)
		}
	}
	wants := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}
	for i, want := range wants {
		l.Fail("u:alice")
		if w := l.Wait("ip:1", "u:alice"); w != want {
			t.Errorf("after %d failures: wait %v, want %v", i+3, w, want)
		}
	}
	now = now.Add(4 * time.Second)
	if w := l.Wait("u:alice"); w != 0 {
		t.Errorf("after the delay: wait %v, want 0", w)
	}
	l.Fail("u:alice")
	l.Succeed("u:alice")
	if w := l.Wait("u:alice"); w != 0 {
		t.Errorf("after a success: wait %v, want 0", w)
	}
}

// TestCredentialIDsReadAsArguments: a credential's id never begins with
// "-" (the CLI would read it as a flag) and holds no "." (it separates
// the id from the secret in a token), over enough ids that a base64 id
// would have begun with "-" many times.
func TestCredentialIDsReadAsArguments(t *testing.T) {
	now := time.Now()
	for range 2000 {
		c, clear, err := auth.NewCredential(store.KindToken, "alice", "ci", task.RoleEditor, now)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(c.ID, "-") || strings.Contains(c.ID, ".") || !strings.HasPrefix(clear, auth.TokenPrefix+c.ID+".") {
			t.Fatalf("id %q, token %q: want an id that reads as an argument, the token prefix+id+\".\"+secret", c.ID, clear)
		}
	}
}
