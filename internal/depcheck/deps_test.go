package depcheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// forbiddenDeps are the arrows the design forbids (docs/DESIGN.md,
// "Layout"), as package → what it must not depend on, directly or through
// another package. An entry is a package of this module (exact path), a
// folder of it (a path ending in "/": every package under it), or another
// module (all its packages).
var forbiddenDeps = map[string][]string{
	// The web table serves the rows through small interfaces; it never
	// pulls in delivery (executors, SMTP, Twilio, Kafka), arming, the
	// scheduler, the jobs service, the server or a store driver.
	"cronsheet/webtable": slices.Concat(belowAPI, []string{"cronsheet/jobs", "cronsheet/patrol"}),
	// The REST API's handler packages (and their shared helpers) hold
	// small interfaces of their own, like webtable.
	"cronsheet/api/httpapi":     apiBanned,
	"cronsheet/api/authapi":     apiBanned,
	"cronsheet/api/tasksapi":    apiBanned,
	"cronsheet/api/targetsapi":  apiBanned,
	"cronsheet/api/runsapi":     apiBanned,
	"cronsheet/api/jobsapi":     apiBanned,
	"cronsheet/api/flowsapi":    slices.Concat(apiBanned, []string{"cronsheet/flows"}),
	"cronsheet/api/auditapi":    apiBanned,
	"cronsheet/api/statsapi":    apiBanned,
	"cronsheet/api/outboxapi":   apiBanned,
	"cronsheet/api/healthapi":   apiBanned,
	"cronsheet/api/settingsapi": apiBanned,
	"cronsheet/api/docsapi":     apiBanned,
	// The binary carries the API's document, not the validator the tests
	// hold it to (internal/apicontract, kin-openapi), nor the tests'
	// fault-injecting store.
	"cronsheet/cmd/cronsheet": {"cronsheet/internal/apicontract", "github.com/getkin/kin-openapi", "cronsheet/store/faulty"},
	"cronsheet/jobs/jobapi":   {"cronsheet/fire", "cronsheet/executors", "cronsheet/jobs"},
	// The model and the storage contract depend on nothing of the product
	// but the schedule language.
	"cronsheet/task":  {"cronsheet/store", "cronsheet/mapping", "cronsheet/fire", "cronsheet/executors"},
	"cronsheet/store": {"cronsheet/mapping", "cronsheet/fire", "cronsheet/executors", "cronsheet/webtable", "cronsheet/server"},
	// Delivery knows nothing of HTTP serving, patrols or the jobs API.
	"cronsheet/fire":      {"cronsheet/server", "cronsheet/webtable", "cronsheet/api/", "cronsheet/patrol", "cronsheet/jobs", "github.com/gin-gonic/gin"},
	"cronsheet/executors": {"cronsheet/store", "cronsheet/fire", "cronsheet/server", "cronsheet/webtable"},
	"cronsheet/patrol":    {"cronsheet/server", "cronsheet/webtable", "cronsheet/fire"},
	// Admission sits below the API: it decides when a delivery goes and
	// knows nothing of who asked.
	"cronsheet/admission": aboveEngine,
	// Arming fires through the firer and sits below the API like
	// admission; it knows nothing of the jobs API either.
	"cronsheet/arming": slices.Concat(aboveEngine, []string{"cronsheet/jobs"}),
	// Explain reads the store and decides with the engine's own rules; it
	// knows nothing of who asked, nor of the drivers. Its answer type
	// depends on nothing of the product, so the API can serve it.
	"cronsheet/explain": slices.Concat(aboveEngine, []string{"cronsheet/jobs", "cronsheet/patrol",
		"cronsheet/store/sqlite", "cronsheet/store/mongo"}),
	"cronsheet/explain/report": {"cronsheet/task", "cronsheet/store", "cronsheet/fire", "cronsheet/executors",
		"cronsheet/admission", "cronsheet/explain"},
	// The configuration and the executors built from it know nothing of
	// storage, delivery or serving.
	// cronsheet apply's engine is a client of the REST API: it never
	// reaches below it (the server, a store, the engine) nor serves.
	"cronsheet/declared": slices.Concat(belowAPI, []string{"cronsheet/store", "cronsheet/store/", "cronsheet/webtable",
		"cronsheet/api/", "cronsheet/jobs", "cronsheet/patrol", "github.com/gin-gonic/gin"}),
	"cronsheet/config":               {"cronsheet/server", "cronsheet/store", "cronsheet/fire", "cronsheet/executors"},
	"cronsheet/executors/configured": {"cronsheet/store", "cronsheet/fire", "cronsheet/server", "cronsheet/webtable"},
}

// belowAPI is what the HTTP surface (api/, webtable) must not reach: the
// engine below it (delivery, admission, arming), the server and the
// drivers and clients of the outside world.
var belowAPI = []string{"cronsheet/executors", "cronsheet/fire", "cronsheet/admission", "cronsheet/arming",
	"cronsheet/server", "cronsheet/store/sqlite", "cronsheet/store/mongo",
	"github.com/twilio/twilio-go", "gopkg.in/gomail.v2", "github.com/twmb/franz-go"}

// apiBanned is what no package of api/ may depend on: belowAPI, the web
// table, the jobs service and the patrols.
var apiBanned = slices.Concat(belowAPI, []string{"cronsheet/webtable", "cronsheet/jobs", "cronsheet/patrol"})

// aboveEngine is what the engine's packages (admission, arming) must not
// depend on: the HTTP surface and the server that wires them.
var aboveEngine = []string{"cronsheet/api/", "cronsheet/webtable", "cronsheet/server", "cronsheet/cmd/",
	"github.com/gin-gonic/gin"}

// pkgInfo is what `go list` says of one package of this module.
type pkgInfo struct {
	deps    []string // every package it depends on, directly or not
	imports []string // the packages it imports itself
}

// listPackages reads every package of the module (tests excluded) with
// one `go list`.
func listPackages(t *testing.T) map[string]pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Deps \" \"}}|{{join .Imports \" \"}}", "cronsheet/...").Output()
	if err != nil {
		t.Fatalf("go list cronsheet/...: %v", err)
	}
	pkgs := make(map[string]pkgInfo)
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 3 {
			t.Fatalf("go list printed %q; want path|deps|imports", line)
		}
		pkgs[f[0]] = pkgInfo{deps: strings.Fields(f[1]), imports: strings.Fields(f[2])}
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of the module; want the whole tree", len(pkgs))
	}
	return pkgs
}

// banned reports whether dep matches the ban b (see forbiddenDeps).
func banned(dep, b string) bool {
	switch {
	case strings.HasSuffix(b, "/"):
		return strings.HasPrefix(dep, b)
	case strings.HasPrefix(b, "cronsheet/"):
		return dep == b
	default:
		return dep == b || strings.HasPrefix(dep, b+"/")
	}
}

// TestForbiddenDeps fails when a package gains a dependency the design
// forbids.
func TestForbiddenDeps(t *testing.T) {
	pkgs := listPackages(t)
	for pkg, bans := range forbiddenDeps {
		info, ok := pkgs[pkg]
		if !ok {
			t.Errorf("%s is not a package of the module; fix forbiddenDeps", pkg)
			continue
		}
		for _, d := range info.deps {
			for _, b := range bans {
				if banned(d, b) {
					t.Errorf("%s depends on %s (through %s); the design forbids it", pkg, b, d)
				}
			}
		}
	}
}

// TestOnlyTheBinaryWires fails when a package other than the binary
// (cmd/cronsheet, and the tests' internal/faultnode) depends on the
// composition root (server) or on a command: server only wires, and
// nothing builds on the wiring.
func TestOnlyTheBinaryWires(t *testing.T) {
	for pkg, info := range listPackages(t) {
		// internal/faultnode is the tests' node binary: cmd/cronsheet's
		// wiring with store/faulty in between, never shipped.
		if pkg == "cronsheet/cmd/cronsheet" || pkg == "cronsheet/server" || pkg == "cronsheet/internal/faultnode" {
			continue
		}
		for _, d := range info.deps {
			if d == "cronsheet/server" || strings.HasPrefix(d, "cronsheet/cmd/") {
				t.Errorf("%s depends on %s; only the binary (cmd/cronsheet) may", pkg, d)
			}
		}
	}
}

// TestDriversKnowNoHTTP fails when a package of store/ imports net/http,
// Gin or the HTTP surface: the drivers persist, they never serve.
func TestDriversKnowNoHTTP(t *testing.T) {
	for pkg, info := range listPackages(t) {
		if pkg != "cronsheet/store" && !strings.HasPrefix(pkg, "cronsheet/store/") {
			continue
		}
		for _, imp := range info.imports {
			if imp == "net/http" {
				t.Errorf("%s imports net/http; a driver knows no HTTP", pkg)
			}
		}
		for _, d := range info.deps {
			for _, b := range []string{"github.com/gin-gonic/gin", "cronsheet/api/", "cronsheet/webtable"} {
				if banned(d, b) {
					t.Errorf("%s depends on %s; a driver knows no HTTP", pkg, d)
				}
			}
		}
	}
}
