package declared

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeShowsTheExample: the README's "Declared schedules" example is
// examples/declared.yaml, which parses and passes Check (the e2e tests
// apply it to a node).
func TestReadmeShowsTheExample(t *testing.T) {
	t.Parallel()
	file, err := os.ReadFile("../examples/declared.yaml")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "## Declared schedules")
	_, block, ok2 := strings.Cut(sec, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README has no yaml block under ## Declared schedules")
	}
	if !strings.HasSuffix(string(file), block) {
		t.Errorf("README's example is not examples/declared.yaml (its comment header aside):\n%s", block)
	}
	f, err := Parse("examples/declared.yaml", file)
	if err == nil {
		err = f.Check()
	}
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "ops-schedules" || len(f.Targets) != 2 || len(f.Flows) != 1 || len(f.Rows) != 2 {
		t.Errorf("example: set %q, %d targets, %d flows, %d rows; want ops-schedules, 2, 1, 2",
			f.Name, len(f.Targets), len(f.Flows), len(f.Rows))
	}
}
