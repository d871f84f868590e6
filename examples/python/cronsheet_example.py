#!/usr/bin/env python3
"""A cronsheet API client with the standard library only (urllib).

It makes an HTTP target that waits for feedback, creates a row in the memos
table that fires it, submits a job and waits for its result, runs the row's
task by hand, reads the run and posts its feedback. It prints one line a
step and exits 0, or prints the API's error (field and reason) and exits 1.

Environment: CRONSHEET_URL (default http://127.0.0.1:8080), CRONSHEET_TOKEN
(an API token; none with auth: local_dev on loopback), CRONSHEET_HOOK_URL
(what the target and the job call; default the node's own /healthz, which
needs http.allow to hold 127.0.0.0/8).
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

BASE = os.environ.get("CRONSHEET_URL", "http://127.0.0.1:8080").rstrip("/")
TOKEN = os.environ.get("CRONSHEET_TOKEN", "")
HOOK = os.environ.get("CRONSHEET_HOOK_URL", BASE + "/healthz")


class APIError(Exception):
    """An answer that is not 2xx: its status and the API's error body."""

    def __init__(self, status, body):
        super().__init__(f"{status} {body.get('code', '')}: {body.get('error', '')}"
                         + (f" (field {body['field']})" if body.get("field") else ""))
        self.status = status
        self.body = body


def call(method, path, body=None):
    """Send a JSON request and return the decoded JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if TOKEN:
        req.add_header("Authorization", "Bearer " + TOKEN)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw = resp.read()
            return json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            err = json.loads(raw)
        except ValueError:
            err = {"error": raw.decode(errors="replace")}
        raise APIError(e.code, err) from None


def main():
    # A target that waits for feedback: its 2xx makes a run "accepted".
    try:
        call("POST", "/api/v1/targets", {"id": "example-hook", "kind": "http", "state": "running",
                                         "feedback_timeout": 300, "http": {"method": "GET", "url": HOOK}})
    except APIError as e:
        if e.body.get("code") != "already_exists":
            raise
    # 1. A row in the memos table.
    row = call("POST", "/api/v1/scenarios/memos/rows",
               {"title": "example", "content": "made by examples/python", "when": "daily 02:00",
                "targets": "example-hook"})
    print("row", row["id"], "created")
    # 2. A job, waiting up to 20 s for its result.
    job = call("POST", "/api/v1/jobs", {"method": "GET", "name": HOOK, "wait": 20})
    print("job", job["id"], job["state"])
    # 3. Run the row's task now (its task appears once the row is synced),
    # then read the run until the target has answered.
    deadline = time.monotonic() + 30
    while True:
        try:
            runs = call("POST", f"/api/v1/tasks/{row['id']}/trigger", {"params": {}})["runs"]
            break
        except APIError as e:
            if e.status != 404 or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    trigger_id = runs[0]["trigger_id"]
    while True:
        run = call("GET", f"/api/v1/runs/{trigger_id}")
        if run["state"] not in ("pending", "running", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    print("run", trigger_id, run["state"])
    # 4. The target's report: status 0 ends the run done.
    run = call("POST", f"/api/v1/runs/{trigger_id}/feedback", {"status": 0, "message": "done by examples/python"})
    print("feedback: run", trigger_id, run["state"])


if __name__ == "__main__":
    try:
        main()
    except APIError as e:
        print("cronsheet:", e, file=sys.stderr)
        sys.exit(1)
