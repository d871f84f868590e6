// Command cronsheet-bench measures a real cronsheet node in-process on a
// fresh SQLite store: trigger lag (scheduled instant → fire start, and →
// ledger record) for N armed tasks, spread over seconds or all due in the
// same second; edit-to-armed time (API POST → armed in gocron); and heap
// memory per armed task. It prints a Markdown table for docs/BENCHMARKS.md.
//
// Usage (from tools/bench; make bench does it):
//
//	go run ./cmd/cronsheet-bench [-n 1000,10000] [-spread 60] [-edits 200]
//	go run ./cmd/cronsheet-bench -park 10000
//	go run ./cmd/cronsheet-bench -restart 10000
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/tools/bench/internal/benchkit"
)

func main() {
	ns := flag.String("n", "1000,10000", "comma-separated task counts")
	spread := flag.Int("spread", 60, "seconds the spread case spreads its tasks over (0: skip that case)")
	edits := flag.Int("edits", 200, "rows created one by one for edit-to-armed")
	park := flag.Int("park", 0, "tasks due in an hour, armed with the arming window on (parked) and off, for heap per armed task (0: skip)")
	restart := flag.Int("restart", 0, "tasks due in an hour; stop the node and time a new node re-arming them all (0: skip)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	stopProfile, err := benchkit.StartCPUProfile(*cpuProfile)
	if err != nil {
		fail(err)
	}
	defer stopProfile()
	gin.SetMode(gin.ReleaseMode)
	switch {
	case *restart > 0:
		err = restartCase(*restart)
	case *park > 0:
		err = parkCases(*park)
	default:
		err = run(*ns, *spread, *edits)
	}
	if err != nil {
		stopProfile()
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cronsheet-bench:", err)
	os.Exit(1)
}

// run measures the lag cases for every count in ns, then edit-to-armed,
// and prints their tables.
func run(ns string, spread, edits int) error {
	fmt.Printf("| case | tasks | fire lag p50 | p99 | max | ledger lag p50 | p99 | max | heap/armed task | created+armed/s |\n")
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range strings.Split(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-n: %w", err)
		}
		for _, sp := range []int{spread, 1} {
			if sp == 0 {
				continue // -spread 0: only the same-second case
			}
			name := fmt.Sprintf("spread over %ds", sp)
			if sp == 1 {
				name = "all due in the same second"
			}
			r, err := lagCase(n, sp)
			if err != nil {
				fmt.Printf("| %s | %d | failed: %v |\n", name, n, err)
				continue
			}
			fmt.Printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.0f |\n", name, n,
				benchkit.MS(r.fire.P50), benchkit.MS(r.fire.P99), benchkit.MS(r.fire.Max),
				benchkit.MS(r.ledger.P50), benchkit.MS(r.ledger.P99), benchkit.MS(r.ledger.Max), benchkit.KiB(r.heapPerTask), r.armRate)
		}
	}
	d, err := editCase(edits)
	if err != nil {
		return fmt.Errorf("edit-to-armed: %w", err)
	}
	fmt.Printf("\n| edit-to-armed (%d rows, one at a time) | p50 | p99 | max |\n|---|---:|---:|---:|\n| POST row → armed | %s | %s | %s |\n",
		edits, benchkit.MS(d.P50), benchkit.MS(d.P99), benchkit.MS(d.Max))
	return nil
}

// rowsURL is the memos scenario's rows endpoint, relative to a node's base.
const rowsURL = "/api/v1/scenarios/memos/rows"

// postJSON posts v as JSON to url with the default client.
func postJSON(url string, v any) (*http.Response, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return http.Post(url, "application/json", bytes.NewReader(raw))
}

// createRow creates a one-off memo row due at the instant at (UTC, whole
// seconds) through the node's API at base, and returns it decoded into
// out when out is not nil.
func createRow(base, at string, out any) error {
	resp, err := postJSON(base+rowsURL, map[string]any{"content": "bench", "channel": "outbox", "when": "at " + at})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("create row: %d %s", resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
