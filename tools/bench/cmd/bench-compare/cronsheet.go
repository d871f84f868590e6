package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"cronsheet/tools/bench/internal/benchkit"
	"cronsheet/tools/bench/internal/jobsjson"
)

// runCronsheet builds cmd/jobs-bench in o.repo/tools/bench and runs it: one
// job per request, the floor, batches and n due at one instant; n spread;
// then each further size due at one instant (and the probe's size), each
// on a node of its own; with o.mongoURI, n at one instant on the mongo
// driver.
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
	common := func(n int) []string {
		return []string{"-n", strconv.Itoa(n), "-clients", strconv.Itoa(o.clients), "-batch", strconv.Itoa(o.batch),
			"-budget", o.budgetFor(n).String(), "-whole-seconds"}
	}
	one, err := jobsBench(bin, filepath.Join(dir, "instant.json"), append(common(o.n), "-spread", "0", "-single=true", "-floor"))
	if err != nil {
		return r, err
	}
	spread, err := jobsBench(bin, filepath.Join(dir, "spread.json"),
		append(common(o.n), "-spread", strconv.Itoa(o.spread), "-single=false"))
	if err != nil {
		return r, err
	}
	r.readIntake(one.Intake)
	if len(one.Lag) != 1 || len(spread.Lag) != 1 {
		return r, errors.New("jobs-bench gave no lag result")
	}
	l, s := one.Lag[0], spread.Lag[0]
	r.instants = append(r.instants, instantOfLag(l))
	r.memPerPending, r.memWhat = l.HeapPerJob, "Go heap of the node"
	r.spread = benchkit.Dist{P50: msDur(s.CallbackP50MS), P99: msDur(s.CallbackP99MS), Max: msDur(s.CallbackMaxMS)}
	r.note("one instant", l)
	r.note("spread", s)
	more := o.instantSizes()[1:]
	if o.probeN > 0 && !slices.Contains(o.instantSizes(), o.probeN) {
		more = append(more, o.probeN)
	}
	for _, n := range more {
		res, err := jobsBench(bin, filepath.Join(dir, fmt.Sprintf("instant-%d.json", n)),
			append(common(n), "-spread", "0", "-single=false"))
		if err != nil {
			return r, err
		}
		if len(res.Lag) != 1 {
			return r, errors.New("jobs-bench gave no lag result")
		}
		r.instants = append(r.instants, instantOfLag(res.Lag[0]))
		r.note(fmt.Sprintf("%d at one instant", n), res.Lag[0])
	}
	if o.mongoURI != "" {
		res, err := jobsBench(bin, filepath.Join(dir, "mongo.json"),
			append(common(o.n), "-spread", "0", "-single=false", "-mongo-uri", o.mongoURI))
		// The mongo driver's drain is for the record, not an aim: a run
		// that fails there is reported beside the tables, not the end of
		// the comparison.
		switch {
		case err != nil:
			r.mongoErr = err.Error()
			benchkit.Progress("cronsheet on the mongo driver failed (reported with the results): %v", err)
		case len(res.Lag) != 1:
			r.mongoErr = "jobs-bench gave no lag result on the mongo driver"
		default:
			r.mongoDrain = instantOfLag(res.Lag[0]).drain
			r.note(fmt.Sprintf("%d at one instant on the mongo driver", o.n), res.Lag[0])
		}
	}
	return r, nil
}

// readIntake takes the single, batch and floor rates from jobs-bench's
// intake results.
func (r *results) readIntake(intake []jobsjson.Intake) {
	for _, in := range intake {
		switch {
		case strings.HasPrefix(in.Name, "HTTP floor"):
			r.floor = in.AcceptedPS
		case in.PerRequest == 1:
			r.single = in.AcceptedPS
		default:
			r.batch = in.AcceptedPS
		}
	}
}

// instantOfLag is the one-instant result of a jobs-bench lag case. Done =
// the last outcome stored, or the last callback when that came later.
func instantOfLag(l jobsjson.Lag) instantResult {
	last := max(l.LastAfterDueS, l.LastOutcomeS)
	return instantResult{n: l.N, drain: float64(l.Calls) / last, lastAfterS: last,
		lag: benchkit.Dist{P50: msDur(l.CallbackP50MS), P99: msDur(l.CallbackP99MS), Max: msDur(l.CallbackMaxMS)}}
}

// note adds what a lag case saw besides its lags to r's notes.
func (r *results) note(what string, l jobsjson.Lag) {
	r.notes = append(r.notes, fmt.Sprintf("cronsheet, %s: %d of %d armed before the first due instant, %d called back, fire lag p99 %.1f ms, %d errors logged",
		what, l.ArmedBeforeDue, l.N, l.Calls, l.FireP99MS, l.Errors))
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
