package depcheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// forbiddenDeps are the arrows the design forbids (docs/DESIGN.md), as
// package → the packages of this module (exact paths) or other modules
// it must not depend on, directly or through another package.
var forbiddenDeps = map[string][]string{
	// The web table serves the rows through small interfaces; it never
	// pulls in delivery (executors, SMTP, Twilio, Kafka), the scheduler,
	// the jobs service, the server or a store driver.
	"cronsheet/webtable": {"cronsheet/executors", "cronsheet/fire", "cronsheet/jobs", "cronsheet/server",
		"cronsheet/patrol", "cronsheet/store/sqlite", "cronsheet/store/mongo",
		"github.com/twilio/twilio-go", "gopkg.in/gomail.v2", "github.com/twmb/franz-go"},
	// The REST API's handler packages (and their shared helpers) hold
	// small interfaces of their own, like webtable.
	"cronsheet/api/httpapi":    apiBanned,
	"cronsheet/api/authapi":    apiBanned,
	"cronsheet/api/tasksapi":   apiBanned,
	"cronsheet/api/targetsapi": apiBanned,
	"cronsheet/api/runsapi":    apiBanned,
	"cronsheet/api/jobsapi":    apiBanned,
	"cronsheet/api/flowsapi":   slices.Concat(apiBanned, []string{"cronsheet/flows"}),
	"cronsheet/api/auditapi":   apiBanned,
	"cronsheet/api/statsapi":   apiBanned,
	"cronsheet/api/outboxapi":  apiBanned,
	"cronsheet/api/healthapi":  apiBanned,
	"cronsheet/jobs/jobapi":    {"cronsheet/fire", "cronsheet/executors", "cronsheet/jobs"},
	// The model and the storage contract depend on nothing of the product
	// but the schedule language.
	"cronsheet/task":  {"cronsheet/store", "cronsheet/mapping", "cronsheet/fire", "cronsheet/executors"},
	"cronsheet/store": {"cronsheet/mapping", "cronsheet/fire", "cronsheet/executors", "cronsheet/webtable", "cronsheet/server"},
	// Delivery knows nothing of HTTP serving, patrols or the jobs API.
	"cronsheet/fire":      {"cronsheet/server", "cronsheet/webtable", "cronsheet/patrol", "cronsheet/jobs", "github.com/gin-gonic/gin"},
	"cronsheet/executors": {"cronsheet/store", "cronsheet/fire", "cronsheet/server", "cronsheet/webtable"},
	"cronsheet/patrol":    {"cronsheet/server", "cronsheet/webtable", "cronsheet/fire"},
	// Arming fires through the firer and knows nothing of HTTP serving or
	// the jobs API; the configuration and the executors built from it
	// know nothing of storage, delivery or serving.
	"cronsheet/arming":               {"cronsheet/server", "cronsheet/webtable", "cronsheet/jobs", "github.com/gin-gonic/gin"},
	"cronsheet/config":               {"cronsheet/server", "cronsheet/store", "cronsheet/fire", "cronsheet/executors"},
	"cronsheet/executors/configured": {"cronsheet/store", "cronsheet/fire", "cronsheet/server", "cronsheet/webtable"},
}

// apiBanned is what no package of api/ may depend on: the web table,
// delivery, the scheduler, the jobs service, the server, the patrols, a
// store driver.
var apiBanned = []string{"cronsheet/webtable", "cronsheet/executors", "cronsheet/fire", "cronsheet/jobs", "cronsheet/server",
	"cronsheet/patrol", "cronsheet/store/sqlite", "cronsheet/store/mongo",
	"github.com/twilio/twilio-go", "gopkg.in/gomail.v2", "github.com/twmb/franz-go"}

// TestForbiddenDeps fails when a package gains a dependency the design
// forbids (issue 16 item 21), read from `go list -deps`.
func TestForbiddenDeps(t *testing.T) {
	for pkg, banned := range forbiddenDeps {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 2 {
			t.Fatalf("go list -deps %s listed %d packages; want the package and its dependencies", pkg, len(deps))
		}
		for _, d := range deps {
			for _, b := range banned {
				// A package of this module is banned by its exact path;
				// another module with all its packages.
				if d == b || !strings.HasPrefix(b, "cronsheet/") && strings.HasPrefix(d, b+"/") {
					t.Errorf("%s depends on %s (through %s); the design forbids it", pkg, b, d)
				}
			}
		}
	}
}
