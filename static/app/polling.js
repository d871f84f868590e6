// The table page's rows from the server: each page DataTables asks for
// (server-side mode), then polls of the page shown, which refresh it in
// place.
import { answerBody, notice } from "../lib/core.js";
import { chips, takeCounts } from "./chips.js";
import { api, params, pollMS } from "./config.js";
import { t } from "./i18n.js";
import { toOrig } from "./layout.js";
import { clearSelection, matchKey } from "./selection.js";
import { busy, confirming, st } from "./state.js";
import { refreshTimes } from "./zones.js";

// tableQuery is the table endpoint's query for DataTables' request d.
function tableQuery(d) {
  const q = new URLSearchParams();
  q.set("draw", d.draw);
  q.set("start", d.start);
  q.set("length", d.length);
  let s = ((d.search && d.search.value) || "").trim();
  const min = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(s) ? st.searchMinCJK : st.searchMin;
  if (s && Array.from(s).length < min) {
    notice(t("search.short", { n: min }));
    s = "";
  } else if (s) {
    notice("");
  }
  q.set("search[value]", s);
  if (chips.state) q.set("filter[state]", chips.state);
  if (chips.channel) q.set("filter[channel]", chips.channel);
  st.cols.forEach((c, i) => q.set("columns[" + i + "][data]", c.data));
  const by = d.order && d.order.length ? toOrig(d.order[0].column) : -1;
  if (by >= 0 && by < st.cols.length) {
    q.set("order[0][column]", by);
    q.set("order[0][dir]", d.order[0].dir === "desc" ? "desc" : "asc");
  }
  return q;
}
// Every table answer carries the page's tag (ETag, a hash of what the
// page shows) and the server's time (Server-Timing). A poll asks for
// the page again with If-None-Match: the tag; while nothing on the page
// changed the server answers 304, without the rows. A poll whose answer
// took the server longer than slowMS (a costly search) makes the next
// one wait twice as long, up to maxPollMS; a fast answer brings it back
// to pollMS. A hidden tab polls every hiddenPollMS, and at once when it
// is shown again.
let slowMS = params.has("slow") ? Number(params.get("slow")) : 500;
const maxPollMS = Math.max(pollMS, 30000), hiddenPollMS = Math.max(pollMS, 30000);
let pollDelay = pollMS, pollTimer = null, pageTag = "";
const answers = { full: 0, unchanged: 0 }; // the polls' answers, for the tests

// getTable asks for a page; tag, when given, is sent as If-None-Match.
// It returns {ok, status, body, tag, ms}: 304 is ok with no body; ms is
// the server's time (else the time until the answer came).
async function getTable(q, tag) {
  const began = performance.now();
  const opts = { cache: "no-store" };
  if (tag) opts.headers = { "If-None-Match": tag };
  const res = await fetch(api + "/table?" + q, opts);
  const m = /\bapp;dur=([\d.]+)/.exec(res.headers.get("Server-Timing") || "");
  const out = { ok: res.ok || res.status === 304, status: res.status, body: null,
    tag: res.headers.get("ETag") || "", ms: m ? Number(m[1]) : performance.now() - began };
  if (res.status === 304) return out;
  out.body = await answerBody(res);
  return out;
}
// pace sets the next poll's delay from an answer's server time.
function pace(ms) {
  pollDelay = ms > slowMS ? Math.min(maxPollMS, pollDelay * 2) : pollMS;
  schedulePoll();
}
// schedulePoll sets the timer of the next poll.
function schedulePoll() {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(tick, document.hidden ? hiddenPollMS : pollDelay);
}
let polls = 0;
// tick is a poll, with the relative times refreshed.
async function tick() {
  polls++;
  refreshTimes();
  try { await poll(); } finally { schedulePoll(); }
}

// A reload that poll started must not redraw under an edit or a delete
// confirmation opened while it was in flight: its draw waits for them to
// close (settle).
let pollReload = false;
// fetchPage is DataTables' ajax: it asks for the page d describes.
export async function fetchPage(d, callback) {
  const fromPoll = pollReload;
  pollReload = false;
  const q = tableQuery(d);
  st.lastQuery = q;
  if (st.allMatches && matchKey(q) !== st.allMatches.key) setTimeout(clearSelection, 0);
  const asked = new URLSearchParams(q);
  if (!chips.counts) asked.set("counts", "1");
  const r = await getTable(asked, "");
  const body = r.body.error ? { draw: d.draw, recordsTotal: 0, recordsFiltered: 0, data: [] } : r.body;
  if (r.body.error) notice(r.body.error, true);
  // The polls ask with the counts: a tag of an answer without them
  // never matches theirs.
  else if (st.lastQuery === q) pageTag = asked.has("counts") ? r.tag : "";
  takeCounts(r.body);
  pace(r.ms);
  if (fromPoll && (st.editing || confirming.size)) { st.pendingDraw = () => callback(body); return; }
  callback(body);
}
// settle draws the page a poll's reload left waiting, once no edit or
// delete confirmation is open.
export function settle() {
  if (st.editing || confirming.size || !st.pendingDraw) return;
  const draw = st.pendingDraw;
  st.pendingDraw = null;
  draw();
}

// poll refreshes the rows on the page in place; a row with an open edit
// is left alone, and the page is only reloaded (same page, same order)
// when its set of rows changed and nobody is editing. The answer's tag
// is kept only once the page shows all of it: a row left alone (being
// edited, or on its way to the server) is asked for again next time.
async function poll() {
  if (!st.lastQuery) return;
  const q = st.lastQuery;
  const asked = new URLSearchParams(q);
  asked.set("counts", "1");
  const r = await getTable(asked, pageTag);
  pace(r.ms);
  if (!r.ok || q !== st.lastQuery) return; // refused, or the page moved meanwhile
  if (r.status === 304) { answers.unchanged++; return; }
  answers.full++;
  takeCounts(r.body);
  const ids = st.table.rows({ page: "current" }).ids().toArray();
  const fresh = r.body.data.map((x) => x.id);
  const info = st.table.page.info();
  const same = ids.length === fresh.length && ids.every((id, i) => id === fresh[i]) &&
    info.recordsTotal === r.body.recordsTotal && info.recordsDisplay === r.body.recordsFiltered;
  if (!same) {
    if (!st.editing && confirming.size === 0 && !st.pendingDraw && !menuOpen(document)) { pollReload = true; st.table.ajax.reload(null, false); }
    return;
  }
  let all = true;
  for (const data of r.body.data) {
    if ((st.editing && st.editing.id === data.id) || busy.has(data.id)) { all = false; continue; }
    const row = st.table.row((i, d) => d.id === data.id);
    // A row whose actions menu is open keeps it: redrawn, it would close.
    if (row.node() && menuOpen(row.node())) { all = false; continue; }
    // An answer asked before a save that has since returned holds the
    // row's older version: the page keeps the newer one (its next edit
    // sends that version as If-Match).
    const cur = row.data();
    if (cur && data.version < cur.version) { all = false; continue; }
    if (JSON.stringify(cur) !== JSON.stringify(data)) row.data(data);
  }
  if (all && !st.pendingDraw) pageTag = r.tag;
}

// menuOpen tells whether a row's actions menu is open inside el.
function menuOpen(el) { return !!el.querySelector("#rows .row-menu .dropdown-menu.show, .row-menu .dropdown-menu.show"); }

// startPolling schedules the first poll; a tab shown again polls at once.
export function startPolling() {
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) { clearTimeout(pollTimer); tick(); } else schedulePoll();
  });
  schedulePoll();
}

// pollStats is what the browser tests read of the polls: how many ran,
// their answers ({full, unchanged}) and the delay until the next one.
export function pollStats() {
  return { polls: polls, answers: Object.assign({}, answers), delay: document.hidden ? hiddenPollMS : pollDelay };
}

// setSlowMS sets the server time above which a poll slows the next one.
export function setSlowMS(ms) { slowMS = ms; }
