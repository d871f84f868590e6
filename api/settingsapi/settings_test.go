package settingsapi_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/api/settingsapi"
	"cronsheet/internal/apitest"
	"cronsheet/store"
	"cronsheet/task"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

const path = "/api/v1/settings"

// setup mounts the API over a store seeded with version 1 and returns the
// engine, the store and the settings handed to Applied.
func setup(t *testing.T) (*gin.Engine, store.Product, *[]*store.Settings) {
	t.Helper()
	st := apitest.OpenStore(t)
	if _, err := st.PutSettings(t.Context(), &store.Settings{HostRate: 1, UpdatedBy: "config"}, 0); err != nil {
		t.Fatal(err)
	}
	var applied []*store.Settings
	e := gin.New()
	settingsapi.New(settingsapi.Deps{Store: st, Audit: st, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Check: func(s *store.Settings) error {
			for _, a := range s.Allow {
				if a == "not a host!" {
					return task.Invalid("allow", "entry %q is neither a CIDR, an IP nor a host name", a)
				}
			}
			return nil
		},
		Applied: func(s *store.Settings) { applied = append(applied, s) }}).Register(e)
	return e, st, &applied
}

func TestSettingsReadAndWrite(t *testing.T) {
	t.Parallel()
	e, st, applied := setup(t)
	rec := apitest.Do(t, e, http.MethodGet, path, "")
	got := apitest.Want[store.Settings](t, rec, http.StatusOK)
	if got.Version != 1 || got.HostRate != 1 || rec.Header().Get("ETag") != `"1"` {
		t.Fatalf("GET = %+v, ETag %q; want version 1, rate 1", got, rec.Header().Get("ETag"))
	}
	body := `{"host_rate":2,"host_burst":3,"hosts":{"API.example.com":{"rate":5,"burst":1}},
		"allow":["127.0.0.1/32"],"deny":["10.0.0.0/8"],"cc_groups":{"billing":4}}`
	saved := apitest.Want[store.Settings](t, apitest.Do(t, e, http.MethodPut, path, body, "If-Match", `"1"`,
		"X-Cronsheet-User", "alice"), http.StatusOK)
	if saved.Version != 2 || saved.Hosts["api.example.com"].Rate != 5 || saved.CCGroups["billing"] != 4 || saved.UpdatedBy != "alice" {
		t.Fatalf("PUT = %+v", saved)
	}
	if len(*applied) != 1 || (*applied)[0].Version != 2 {
		t.Fatalf("Applied got %d settings, want version 2 once", len(*applied))
	}
	t.Run("Stale", func(t *testing.T) {
		apitest.WantError(t, apitest.Do(t, e, http.MethodPut, path, body, "If-Match", `"1"`), http.StatusConflict, "",
			"changed since you loaded them")
	})
	t.Run("NoVersion", func(t *testing.T) {
		apitest.WantError(t, apitest.Do(t, e, http.MethodPut, path, body), http.StatusBadRequest, "version", "send the version")
	})
	t.Run("Audited", func(t *testing.T) {
		recs, err := st.QueryAudit(t.Context(), store.AuditQuery{Scenario: store.AuditKindSettings, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].Who != "alice" || recs[0].Action != store.AuditUpdate || recs[0].New["version"] == nil {
			t.Fatalf("audit = %+v, want one update by alice with the version", recs)
		}
	})
	if cur, err := st.GetSettings(t.Context()); err != nil || cur.Version != 2 {
		t.Fatalf("stored %+v, %v; want version 2 after refused puts", cur, err)
	}
}

func TestSettingsValidation(t *testing.T) {
	t.Parallel()
	e, st, applied := setup(t)
	tests := []struct{ name, body, field, msg string }{
		{"NegativeRate", `{"host_rate":-1}`, "host_rate", "rate must be 0"},
		{"NegativeBurst", `{"host_burst":-2}`, "host_rate", "burst must be 0"},
		{"HostRate", `{"hosts":{"h.example":{"rate":-3}}}`, "hosts.h.example", "rate must be 0"},
		{"BadHost", `{"hosts":{"h.example:80":{"rate":3}}}`, "hosts", "not a host name"},
		{"BadCIDR", `{"deny":["10.0.0.0/33"]}`, "deny", "not a CIDR"},
		{"EmptyEntry", `{"allow":[" "]}`, "allow", "empty"},
		{"BadAllowEntry", `{"allow":["not a host!"]}`, "allow", "neither a CIDR"},
		{"CCZero", `{"cc_groups":{"billing":0}}`, "cc_groups.billing", "limit must be 1"},
		{"UnknownField", `{"host_rat":1}`, "host_rat", ""},
		{"LockOut", `{"allow":[],"deny":["0.0.0.0/0","::/0"]}`, "deny", "every host would be refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, apitest.Do(t, e, http.MethodPut, path, tt.body, "If-Match", "1"), http.StatusBadRequest, tt.field, tt.msg)
		})
	}
	// Denying all of one family, or all with an allow entry, is no lock-out.
	for i, body := range []string{`{"deny":["0.0.0.0/0"]}`, `{"allow":["api.example.com"],"deny":["0.0.0.0/0","::/0"]}`} {
		rec := apitest.Do(t, e, http.MethodPut, path, body, "If-Match", fmt.Sprint(i+1))
		apitest.Want[store.Settings](t, rec, http.StatusOK)
	}
	if len(*applied) != 2 {
		t.Fatalf("Applied %d times, want 2 (only the accepted puts)", len(*applied))
	}
	if _, err := st.GetSettings(t.Context()); errors.Is(err, task.ErrNotFound) {
		t.Fatal("settings gone")
	}
}
