package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestClientExamples runs the client examples of examples/ (Python with
// urllib, Node with fetch, Go with net/http) against a live node: each
// makes a target, a memos row and a job with wait, runs the row's task,
// reads the run and posts its feedback. Its output must name each step's
// result, and the node must hold the run done with the example's report.
// With a bad token each must exit 1 saying why. Without python3 or node
// the example is skipped, or fails when CI is set.
func TestClientExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	p := newProcess(t, bin, dir, "node", addr, fmt.Sprintf(`listen: %s
auth: local_dev
log_level: warn
store: {driver: sqlite, path: %s}
http: {allow: [127.0.0.0/8]}
`, addr, filepath.Join(dir, "data", "cronsheet.db")))
	p.start(t)
	goExample := filepath.Join(dir, "go-example")
	build := exec.Command("go", "build", "-o", goExample, "./examples/go")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build examples/go: %v\n%s", err, out)
	}
	for _, ex := range []struct{ name, interp, script string }{
		{"python", "python3", "examples/python/cronsheet_example.py"},
		{"node", "node", "examples/node/cronsheet_example.mjs"},
		{"go", "", goExample},
	} {
		t.Run(ex.name, func(t *testing.T) {
			argv := []string{ex.script}
			if ex.interp != "" {
				path, err := exec.LookPath(ex.interp)
				if err != nil {
					if os.Getenv("CI") != "" {
						t.Fatalf("%s is not installed (CI is set; .ci/setup.d/40-examples.sh installs it)", ex.interp)
					}
					t.Skipf("%s is not installed: the %s example is not run", ex.interp, ex.name)
				}
				argv = []string{path, filepath.Join("..", "..", ex.script)}
			}
			runExample(t, p.base(), ex.name, argv)
		})
	}
}

// exampleOut is what every example prints, one line a step.
var exampleOut = regexp.MustCompile(`^row (\S+) created\njob (job_\S+) done\nrun (tr_\S+) accepted\nfeedback: run (tr_\S+) done\n$`)

// runExample runs argv against base, checks its output and the run it
// reported, then runs it with a bad token and checks the refusal.
func runExample(t *testing.T, base, name string, argv []string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "CRONSHEET_URL="+base, "CRONSHEET_TOKEN=")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s example: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout.String(), stderr.String())
	}
	m := exampleOut.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("%s example printed:\n%s\nwant the four steps (stderr %q)", name, stdout.String(), stderr.String())
	}
	if m[3] != m[4] {
		t.Errorf("the run read (%s) is not the run reported (%s)", m[3], m[4])
	}
	var run struct {
		TaskID   string `json:"task_id"`
		State    string `json:"state"`
		Feedback []struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
		} `json:"feedback"`
	}
	getJSON(t, base+"/api/v1/runs/"+m[4], &run)
	want := "done by examples/" + name
	if run.TaskID != m[1] || run.State != "done" || len(run.Feedback) != 1 || run.Feedback[0].Message != want {
		t.Errorf("run %s at the node = %+v, want task %s done with the report %q", m[4], run, m[1], want)
	}
	var job struct {
		State string `json:"state"`
	}
	getJSON(t, base+"/api/v1/jobs/"+m[2], &job)
	if job.State != "done" {
		t.Errorf("job %s at the node is %s, want done", m[2], job.State)
	}

	stdout.Reset()
	stderr.Reset()
	bad := exec.Command(argv[0], argv[1:]...)
	bad.Env = append(os.Environ(), "CRONSHEET_URL="+base, "CRONSHEET_TOKEN=not-a-token")
	bad.Stdout, bad.Stderr = &stdout, &stderr
	err := bad.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "401 unauthorized") {
		t.Errorf("%s example with a bad token: %v, stderr %q; want exit 1 saying 401 unauthorized", name, err, stderr.String())
	}
}
