package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/task"
)

// The cluster harness: three cronsheet processes on one SQLite file, a
// slow HTTP hook that records every delivery, and the figures the
// scenarios of cluster_test.go assert on. Everything is counted at the
// receiver (the hook), never from the store's own bookkeeping.

// clusterLease is the nodes' patrol.lease: short, so that failover happens
// within a scenario, and at least 3× patrol.interval.
const clusterLease = 3 * time.Second

// cluster is a set of cronsheet nodes sharing one SQLite file.
type cluster struct {
	dir, dbPath string
	nodes       []*clusterNode
	hook        *hook
}

// clusterStore says which store the nodes share and how fast they patrol
// it; the zero value is a fresh SQLite file with interval 250 ms and
// clusterLease.
type clusterStore struct {
	YAML     string        // config's store value, a flow mapping; "": the SQLite file
	Interval time.Duration // patrol.interval; 0: 250 ms
	Lease    time.Duration // patrol.lease; 0: clusterLease
	// Faults, when set, runs the nodes as internal/faultnode with it as
	// CRONSHEET_FAULTS, each node's fault counts in dir/<id>-faults.json.
	Faults string
}

// clusterNode is one node: its process and stable node id.
type clusterNode struct {
	*process
	id string
}

// incarnation names the node's current run, e.g. n2#3 for its third start;
// the hook attributes each delivery to one.
func (n *clusterNode) incarnation() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return fmt.Sprintf("%s#%d", n.id, n.starts)
}

// startCluster starts size nodes on one fresh SQLite file and a hook whose
// answers take up to maxDelay; every node may call back to loopback.
func startCluster(t *testing.T, size int, maxDelay time.Duration) *cluster {
	t.Helper()
	return startClusterOn(t, size, maxDelay, clusterStore{})
}

// startClusterOn is startCluster on the store cs describes.
func startClusterOn(t *testing.T, size int, maxDelay time.Duration, cs clusterStore) *cluster {
	t.Helper()
	bin := buildBinary(t)
	dir := t.TempDir()
	c := &cluster{dir: dir, dbPath: filepath.Join(dir, "data", "cronsheet.db")}
	storeYAML := cs.YAML
	if storeYAML == "" {
		storeYAML = fmt.Sprintf("{driver: sqlite, path: %s}", c.dbPath)
	}
	interval, lease := cs.Interval, cs.Lease
	if interval == 0 {
		interval = 250 * time.Millisecond
	}
	if lease == 0 {
		lease = clusterLease
	}
	c.hook = startHook(t, maxDelay)
	for i := range size {
		addr := freeAddr(t)
		id := fmt.Sprintf("n%d", i+1)
		cfg := fmt.Sprintf(`listen: %s
auth: local_dev
node_id: %s
log_level: info
store: %s
patrol: {interval: %s, lease: %s}
fire: {backoff_base: 200ms, backoff_max: 2s}
shutdown_timeout: 5s
http: {allow: [127.0.0.0/8]}
`, addr, id, storeYAML, interval, lease)
		n := &clusterNode{process: newProcess(t, bin, dir, id, addr, cfg), id: id}
		if cs.Faults != "" {
			n.bin = faultBin.Path(t)
			n.env = []string{"CRONSHEET_FAULTS=" + cs.Faults, "CRONSHEET_FAULTS_STATS=" + filepath.Join(dir, id+"-faults.json")}
		}
		c.nodes = append(c.nodes, n)
	}
	for _, n := range c.nodes {
		c.startNode(t, n)
	}
	return c
}

// startNode starts n and tells the hook which process is n's current
// incarnation.
func (c *cluster) startNode(t *testing.T, n *clusterNode) {
	t.Helper()
	n.start(t)
	var st struct {
		Nodes []struct {
			Incarnation string `json:"incarnation"`
			PID         int    `json:"pid"`
		} `json:"nodes"`
	}
	getJSON(t, "http://"+n.addr+"/api/v1/status", &st)
	for _, e := range st.Nodes {
		if e.PID == n.pid() {
			c.hook.senders.addInstance(e.Incarnation, n.incarnation())
		}
	}
}

// killNode kills n with SIGKILL and records when, for the causes of
// duplicates.
func (c *cluster) killNode(t *testing.T, n *clusterNode) time.Time {
	t.Helper()
	who := n.incarnation()
	n.kill(t)
	at := time.Now()
	c.hook.senders.killed(who, at)
	return at
}

// logsAbout returns every node's log lines that mention s (a trigger or
// task id), each prefixed with its node, to explain a duplicate.
func (c *cluster) logsAbout(s string) string {
	var b strings.Builder
	for _, n := range c.nodes {
		data, _ := os.ReadFile(n.logPath)
		for line := range strings.Lines(string(data)) {
			if strings.Contains(line, s) {
				b.WriteString(n.id + ": " + line)
			}
		}
	}
	return b.String()
}

// live returns the nodes that are running now.
func (c *cluster) live() []*clusterNode {
	var out []*clusterNode
	for _, n := range c.nodes {
		if n.pid() != 0 {
			out = append(out, n)
		}
	}
	return out
}

// anyLive returns a random running node's base URL.
func (c *cluster) anyLive() string {
	l := c.live()
	return l[rand.IntN(len(l))].base()
}

// hook is the local HTTP receiver of every delivery: it records the
// trigger id, the idempotency key, which node process sent it, and when it
// arrived and ended, and answers 200 after a random delay so deliveries
// are still in flight while ownership moves.
type hook struct {
	srv      *httptest.Server
	maxDelay time.Duration
	senders  *senderIndex

	mu         sync.Mutex
	deliveries []delivery
}

// delivery is one call received by the hook.
type delivery struct {
	TriggerID string
	Key       string // Idempotency-Key: <task or job id>:<slot unix ms>:<target>
	Path      string
	Sender    string // node incarnation, e.g. n1#2; "?" when unknown
	Instance  string // the X-Cronsheet-Instance header: the sender's registry incarnation
	Arrived   time.Time
	Ended     time.Time
	Cut       bool // the sender hung up before the answer
}

// slot is the delivery's slot, read from its idempotency key.
func (d delivery) slot() time.Time {
	_, rest, _ := strings.Cut(d.Key, ":")
	ms, _, _ := strings.Cut(rest, ":")
	n, _ := strconv.ParseInt(ms, 10, 64)
	return time.UnixMilli(n)
}

// taskID is the delivery's task (or job) id, read from its idempotency key.
func (d delivery) taskID() string {
	id, _, _ := strings.Cut(d.Key, ":")
	return id
}

func startHook(t *testing.T, maxDelay time.Duration) *hook {
	t.Helper()
	h := &hook{maxDelay: maxDelay, senders: newSenderIndex()}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) serve(w http.ResponseWriter, r *http.Request) {
	d := delivery{TriggerID: r.Header.Get("X-Cronsheet-Trigger-Id"), Key: r.Header.Get("Idempotency-Key"),
		Path: r.URL.Path, Sender: "?", Instance: r.Header.Get("X-Cronsheet-Instance"), Arrived: time.Now()}
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-time.After(rand.N(h.maxDelay + 1)):
	case <-r.Context().Done():
		d.Cut = true
	}
	if !d.Cut {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "ok")
	}
	d.Ended = time.Now()
	h.mu.Lock()
	h.deliveries = append(h.deliveries, d)
	h.mu.Unlock()
}

// all returns every delivery recorded so far, in arrival order, each
// sender named by its instance header once that instance is known
// (startNode reads it from the node's status).
func (h *hook) all() []delivery {
	h.mu.Lock()
	out := append([]delivery(nil), h.deliveries...)
	h.mu.Unlock()
	for i := range out {
		if who := h.senders.ofInstance(out[i].Instance); who != "" && out[i].Sender == "?" {
			out[i].Sender = who
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Arrived.Before(out[j].Arrived) })
	return out
}

// count is the number of deliveries recorded so far.
func (h *hook) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.deliveries)
}

// senderIndex names the node process that sent each delivery by its
// X-Cronsheet-Instance header (the sender's registry incarnation, random
// per process, which startNode reads from the node's status), and
// remembers when each process was killed.
type senderIndex struct {
	mu        sync.Mutex
	deaths    map[string]time.Time // incarnation → SIGKILL time
	instances map[string]string    // registry incarnation → incarnation
}

func newSenderIndex() *senderIndex {
	return &senderIndex{deaths: map[string]time.Time{}, instances: map[string]string{}}
}

// addInstance records that the process who runs as registry incarnation
// inc (the X-Cronsheet-Instance of its deliveries).
func (s *senderIndex) addInstance(inc, who string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.instances[inc] = who
}

// ofInstance returns the process of incarnation inc, "" when unknown.
func (s *senderIndex) ofInstance(inc string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instances[inc]
}

func (s *senderIndex) killed(who string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deaths[who] = at
}

// deathOf returns when who was killed, and whether it was.
func (s *senderIndex) deathOf(who string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.deaths[who]
	return at, ok
}

// String reports how many sender processes are known.
func (s *senderIndex) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("sender_processes=%d", len(s.instances))
}

// api is a small JSON client for the nodes' HTTP API; it never calls
// t.Fatal, so churn goroutines may use it.
var api = &http.Client{Timeout: 30 * time.Second}

// callJSON sends body (JSON, unless nil) and decodes the answer into out
// (unless nil); it returns the status code.
func callJSON(ctx context.Context, method, url string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := api.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %v: %s", method, url, err, task.Truncate(string(raw), 200))
		}
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, task.Truncate(string(raw), 200))
	}
	return resp.StatusCode, nil
}

// mustCall is callJSON for the test goroutine: any error fails the test.
func mustCall(t *testing.T, method, url string, body, out any) {
	t.Helper()
	if _, err := callJSON(context.Background(), method, url, body, out); err != nil {
		t.Fatal(err)
	}
}

// createHookTarget creates the http target "hook" calling h at /t/{task id}.
func createHookTarget(t *testing.T, base string, h *hook) {
	t.Helper()
	mustCall(t, "POST", base+"/api/v1/targets", map[string]any{"id": "hook", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/t/{{task_id}}"}}, nil)
}

// createEverySecondTasks creates n memos rows firing every second to the
// hook target, misfire once, overlap allow (every slot is delivered, even
// while the previous run is still at the slow hook), and returns their
// task ids.
func createEverySecondTasks(t *testing.T, base string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%04d", i)
		mustCall(t, "POST", base+"/api/v1/scenarios/memos/rows", map[string]any{"memo_id": ids[i], "content": "tick",
			"when": "every 1s", "targets": "hook", "misfire": "once", "overlap": "allow"}, nil)
	}
	return ids
}

// submitJobs submits n delayed POST jobs to the hook at /j, their delays
// spread evenly over [minDelay, maxDelay], in batches through base; it
// returns the job ids.
func submitJobs(t *testing.T, base string, h *hook, n int, minDelay, maxDelay time.Duration) []string {
	t.Helper()
	var ids []string
	for len(ids) < n {
		batch := make([]map[string]any, min(1000, n-len(ids)))
		for i := range batch {
			k := len(ids) + i
			d := minDelay + time.Duration(int64(maxDelay-minDelay)*int64(k)/int64(max(1, n-1)))
			batch[i] = map[string]any{"method": "POST", "name": h.srv.URL + "/j", "delay": d.Seconds(),
				"params": fmt.Sprintf(`{"n":%d}`, k)}
		}
		var items []struct {
			Job *struct {
				ID string `json:"id"`
			} `json:"job"`
			Error string `json:"error"`
		}
		mustCall(t, "POST", base+"/api/v1/jobs", batch, &items)
		for _, it := range items {
			if it.Job == nil {
				t.Fatalf("job refused: %s", it.Error)
			}
			ids = append(ids, it.Job.ID)
		}
	}
	return ids
}

// ledgerRuns reads a task's whole fire ledger through the API.
func ledgerRuns(ctx context.Context, base, taskID string) ([]*task.Run, error) {
	var all []*task.Run
	cursor := ""
	for {
		var page struct {
			Runs []*task.Run `json:"runs"`
			Next string      `json:"next"`
		}
		url := base + "/api/v1/runs?limit=500&task_id=" + taskID
		if cursor != "" {
			url += "&cursor=" + cursor
		}
		if _, err := callJSON(ctx, "GET", url, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Runs...)
		if page.Next == "" {
			return all, nil
		}
		cursor = page.Next
	}
}

// jobState reads one job's state through the API.
func jobState(ctx context.Context, base, id string) (task.JobState, error) {
	var v struct {
		State task.JobState `json:"state"`
	}
	_, err := callJSON(ctx, "GET", base+"/api/v1/jobs/"+id, nil, &v)
	return v.State, err
}
