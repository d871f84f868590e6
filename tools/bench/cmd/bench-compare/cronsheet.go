package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"cronsheet/tools/bench/internal/benchkit"
	"cronsheet/tools/bench/internal/jobsjson"
)

// runCronsheet builds cmd/jobs-bench in o.repo/tools/bench and runs it twice: one
// job per request, batches and N due at one instant; then N spread.
func runCronsheet(o options, dir string) (results, error) {
	var r results
	bin := filepath.Join(dir, "jobs-bench")
	mod := filepath.Join(o.repo, "tools", "bench")
	benchkit.Progress("cronsheet: building %s/cmd/jobs-bench", mod)
	build := exec.Command("go", "build", "-o", bin, "./cmd/jobs-bench")
	build.Dir, build.Stdout, build.Stderr = mod, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return r, fmt.Errorf("go build ./cmd/jobs-bench in %s: %w", mod, err)
	}
	common := []string{"-n", strconv.Itoa(o.n), "-clients", strconv.Itoa(o.clients), "-batch", strconv.Itoa(o.batch),
		"-budget", o.budget.String(), "-whole-seconds"}
	one, err := jobsBench(bin, filepath.Join(dir, "instant.json"), append(common, "-spread", "0", "-single=true", "-floor"))
	if err != nil {
		return r, err
	}
	spread, err := jobsBench(bin, filepath.Join(dir, "spread.json"),
		append(common, "-spread", strconv.Itoa(o.spread), "-single=false"))
	if err != nil {
		return r, err
	}
	for _, in := range one.Intake {
		if strings.HasPrefix(in.Name, "HTTP floor") {
			r.floor = in.AcceptedPS
			continue
		}
		if in.PerRequest == 1 {
			r.single = in.AcceptedPS
		} else {
			r.batch = in.AcceptedPS
		}
	}
	if len(one.Lag) != 1 || len(spread.Lag) != 1 {
		return r, errors.New("jobs-bench gave no lag result")
	}
	l := one.Lag[0]
	r.instant = benchkit.Dist{P50: msDur(l.CallbackP50MS), P99: msDur(l.CallbackP99MS), Max: msDur(l.CallbackMaxMS)}
	// Done = the last outcome stored, or the last callback when that came
	// later.
	last := l.LastAfterDueS
	if l.LastOutcomeS > last {
		last = l.LastOutcomeS
	}
	r.drain = float64(l.Calls) / last
	r.instantLastAfterS = last
	r.memPerPending, r.memWhat = l.HeapPerJob, "Go heap of the node"
	s := spread.Lag[0]
	r.spread = benchkit.Dist{P50: msDur(s.CallbackP50MS), P99: msDur(s.CallbackP99MS), Max: msDur(s.CallbackMaxMS)}
	for _, lr := range []struct {
		what string
		l    int64
		arm  int64
		n    int
		err  int64
		fire float64
	}{{"one instant", l.Calls, l.ArmedBeforeDue, l.N, l.Errors, l.FireP99MS}, {"spread", s.Calls, s.ArmedBeforeDue, s.N, s.Errors, s.FireP99MS}} {
		r.notes = append(r.notes, fmt.Sprintf("cronsheet, %s: %d of %d armed before the first due instant, %d called back, fire lag p99 %.1f ms, %d errors logged",
			lr.what, lr.arm, lr.n, lr.l, lr.fire, lr.err))
	}
	return r, nil
}

// settle writes the file system's dirty pages out (sync(2)) before a
// workload starts, so the kernel's write-back of the previous one (Redis's
// AOF, the last run's SQLite file) does not run during it.
func settle() { syscall.Sync() }

// jobsBench runs the jobs-bench binary with args, its output passed to
// stderr, and reads its JSON results.
func jobsBench(bin, out string, args []string) (*jobsjson.Results, error) {
	args = append(args, "-json", out)
	settle()
	benchkit.Progress("cronsheet: jobs-bench %s", strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		fmt.Fprintln(os.Stderr, "    "+sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("jobs-bench %s: %w", strings.Join(args, " "), err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	var r jobsjson.Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	return &r, nil
}
