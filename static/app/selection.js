// Selection and bulk actions on the table page.
import { getJSON, notice } from "../lib/core.js";
import { api } from "./config.js";
import { t } from "./i18n.js";
import { st } from "./state.js";

// The selection is DataTables Select's (npm datatables.net-select): a
// click on a row's box ticks it, Shift+click ticks the range from the
// last box clicked, and the ticks stay across pages (by row id). "Select
// all N matches" switches Select to its subtractive mode: every row the
// current search and filters match is selected but those unticked
// since; a new search or filter clears such a selection. A bulk action
// on all matches collects their ids from the table endpoint, a page at
// a time, and sends them to POST …/rows/bulk in batches of 500.
const maxAllMatches = 10000; // the most rows "select all matches" acts on
const bulkBatch = 500; // webtable's maxBulkIDs
// selection is Select's: {all: every match is selected but ids, ids}.
export function selection() {
  const c = st.table ? st.table.select.cumulative() : null;
  if (!c) return { all: false, ids: [] };
  return { all: c.mode === "subtractive", ids: c.rows };
}
// isSelected tells whether the row id is selected.
export function isSelected(id) {
  const s = selection();
  return s.all ? !s.ids.includes(id) : s.ids.includes(id);
}
// selectedCount is how many rows are selected.
export function selectedCount() {
  const s = selection();
  return s.all ? Math.max(0, st.table.page.info().recordsDisplay - s.ids.length) : s.ids.length;
}
// matchKey is what a "select all matches" selection is of: the search
// and the filters of a table query, not its page or order.
export function matchKey(q) {
  const k = new URLSearchParams(q);
  for (const p of ["draw", "start", "length", "counts"]) k.delete(p);
  for (const p of Array.from(k.keys())) if (p.startsWith("order[")) k.delete(p);
  return k.toString();
}
// showBulk shows the bulk bar and the rows' boxes as the selection is.
export function showBulk() {
  const n = st.table ? selectedCount() : 0;
  const box = document.getElementById("bulk");
  box.hidden = n === 0;
  document.getElementById("bulk-count").textContent = t(st.allMatches ? "bulk.count.all" : "bulk.count", { n: n });
  if (n === 0) document.getElementById("bulk-confirm").hidden = true;
  const info = st.table ? st.table.page.info() : { recordsDisplay: 0 };
  const pageIDs = st.table ? st.table.rows({ page: "current" }).ids().toArray() : [];
  const pageAll = pageIDs.length > 0 && pageIDs.every(isSelected);
  const more = document.getElementById("select-matches");
  more.hidden = !!st.allMatches || !pageAll || info.recordsDisplay <= pageIDs.length || info.recordsDisplay > maxAllMatches;
  more.textContent = t("select.matches", { n: info.recordsDisplay });
  const all = document.getElementById("select-all");
  if (all) all.checked = pageAll;
  for (const el of document.querySelectorAll("#rows tbody input.sel-row")) {
    const id = el.closest("tr").id;
    el.checked = isSelected(id);
  }
}
// selectPage (de)selects the rows of the page shown.
export function selectPage(on) {
  const rows = st.table.rows({ page: "current" });
  if (on) rows.select(); else rows.deselect();
  showBulk();
}
// selectAllMatches selects every row the current query matches.
export function selectAllMatches() {
  st.allMatches = { key: matchKey(st.lastQuery), query: new URLSearchParams(st.lastQuery) };
  st.table.rows({ page: "current" }).select();
  st.table.select.cumulative("subtractive"); // redraws the page
  showBulk();
}
// clearSelection selects nothing.
export function clearSelection() {
  st.allMatches = null;
  st.table.select.cumulative("additive");
  st.table.rows().deselect();
  selection().ids.length = 0;
  showBulk();
}
// unselect drops id from the selection (a row deleted on its own).
export function unselect(id) {
  const s = selection();
  const i = s.ids.indexOf(id);
  if (!s.all && i >= 0) s.ids.splice(i, 1);
  if (s.all && i < 0) s.ids.push(id);
}
// bulkIDs are the ids a bulk action acts on: the ticked rows, or every
// match of the selected query but those unticked.
async function bulkIDs() {
  const s = selection();
  if (!s.all) return s.ids.slice();
  const except = new Set(s.ids);
  const ids = [];
  const q = new URLSearchParams(st.allMatches.query);
  q.delete("counts");
  q.set("length", String(bulkBatch));
  for (let start = 0; start < maxAllMatches; start += bulkBatch) {
    q.set("start", String(start));
    const r = await getJSON(api + "/table?" + q);
    if (!r.ok) throw new Error(r.body.error);
    for (const row of r.body.data) if (!except.has(row.id)) ids.push(row.id);
    if (r.body.data.length < bulkBatch) break;
  }
  return ids;
}
// sendBulk sends ids to POST …/rows/bulk in batches and sums the
// answers: {ok, failed, errors: the results with an error}.
async function sendBulk(action, ids) {
  const sum = { ok: 0, failed: 0, errors: [] };
  for (let i = 0; i < ids.length; i += bulkBatch) {
    const r = await getJSON(api + "/rows/bulk", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ action: action, ids: ids.slice(i, i + bulkBatch) }),
    });
    if (!r.ok) throw new Error(r.body.error);
    sum.ok += r.body.ok;
    sum.failed += r.body.failed;
    sum.errors.push(...r.body.results.filter((x) => x.error));
  }
  return sum;
}

// bulk applies action (activate, deactivate, delete) to the selection;
// what failed stays selected, its reasons in the notice.
export async function bulk(action) {
  document.getElementById("bulk-confirm").hidden = true;
  for (const b of document.querySelectorAll("#bulk button")) b.disabled = true;
  let sum;
  try {
    sum = await sendBulk(action, await bulkIDs());
  } catch (err) {
    notice(err.message, true);
    return;
  } finally {
    for (const b of document.querySelectorAll("#bulk button")) b.disabled = false;
  }
  clearSelection();
  selection().ids.push(...sum.errors.map((x) => x.id)); // what failed stays ticked, to try again
  let msg = t("bulk.done", { action: t("bulk." + action), ok: sum.ok, failed: sum.failed });
  if (sum.errors.length) msg += " " + sum.errors.slice(0, 5).map((x) => x.id + ": " + x.error).join("; ");
  notice(msg, sum.errors.length > 0);
  showBulk();
  st.pendingDraw = null;
  st.table.ajax.reload(null, false);
}
