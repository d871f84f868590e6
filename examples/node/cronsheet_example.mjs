// A cronsheet API client with Node's built-in fetch only (Node 18 or newer).
//
// It makes an HTTP target that waits for feedback, creates a row in the
// memos table that fires it, submits a job and waits for its result, runs
// the row's task by hand, reads the run and posts its feedback. It prints
// one line a step and exits 0, or prints the API's error (field and reason)
// and exits 1.
//
// Environment: CRONSHEET_URL (default http://127.0.0.1:8080),
// CRONSHEET_TOKEN (an API token; none with auth: local_dev on loopback),
// CRONSHEET_HOOK_URL (what the target and the job call; default the node's
// own /healthz, which needs http.allow to hold 127.0.0.0/8).

const BASE = (process.env.CRONSHEET_URL || "http://127.0.0.1:8080").replace(/\/+$/, "");
const TOKEN = process.env.CRONSHEET_TOKEN || "";
const HOOK = process.env.CRONSHEET_HOOK_URL || BASE + "/healthz";

// APIError is an answer that is not 2xx: its status and the API's error body.
class APIError extends Error {
  constructor(status, body) {
    super(`${status} ${body.code || ""}: ${body.error || ""}` + (body.field ? ` (field ${body.field})` : ""));
    this.status = status;
    this.body = body;
  }
}

// call sends a JSON request and returns the decoded JSON answer.
async function call(method, path, body) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (TOKEN) headers.Authorization = "Bearer " + TOKEN;
  const resp = await fetch(BASE + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { error: text };
  }
  if (!resp.ok) throw new APIError(resp.status, data || {});
  return data;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  // A target that waits for feedback: its 2xx makes a run "accepted".
  try {
    await call("POST", "/api/v1/targets", {
      id: "example-hook", kind: "http", state: "running", feedback_timeout: 300, http: { method: "GET", url: HOOK },
    });
  } catch (e) {
    if (!(e instanceof APIError) || e.body.code !== "already_exists") throw e;
  }
  // 1. A row in the memos table.
  const row = await call("POST", "/api/v1/scenarios/memos/rows", {
    title: "example", content: "made by examples/node", when: "daily 02:00", targets: "example-hook",
  });
  console.log("row", row.id, "created");
  // 2. A job, waiting up to 20 s for its result.
  const job = await call("POST", "/api/v1/jobs", { method: "GET", name: HOOK, wait: 20 });
  console.log("job", job.id, job.state);
  // 3. Run the row's task now (its task appears once the row is synced),
  // then read the run until the target has answered.
  const deadline = Date.now() + 30000;
  let runs;
  for (;;) {
    try {
      runs = (await call("POST", `/api/v1/tasks/${row.id}/trigger`, { params: {} })).runs;
      break;
    } catch (e) {
      if (!(e instanceof APIError) || e.status !== 404 || Date.now() > deadline) throw e;
      await sleep(200);
    }
  }
  const triggerId = runs[0].trigger_id;
  let run;
  for (;;) {
    run = await call("GET", `/api/v1/runs/${triggerId}`);
    if (!["pending", "running", "failed"].includes(run.state) || Date.now() > deadline) break;
    await sleep(200);
  }
  console.log("run", triggerId, run.state);
  // 4. The target's report: status 0 ends the run done.
  run = await call("POST", `/api/v1/runs/${triggerId}/feedback`, { status: 0, message: "done by examples/node" });
  console.log("feedback: run", triggerId, run.state);
}

main().catch((e) => {
  console.error("cronsheet:", e.message);
  process.exit(1);
});
