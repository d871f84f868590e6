// Editing the table page's cells: the cell editor (a schedule's with a
// preview of its next fires), its save through the rows API, and the
// keyboard over the cells (KeyTable).
import { getJSON, notice } from "../lib/core.js";
import { cellError, colOf, rowOf, withTask } from "./cells.js";
import { api, scenario } from "./config.js";
import { editorOf } from "./editors.js";
import { t } from "./i18n.js";
import { shownCols, toCur } from "./layout.js";
import { settle } from "./polling.js";
import { st } from "./state.js";
import { remember } from "./undo.js";
import { inZone, rowZone, zoneOfText } from "./zones.js";

// preview asks for a schedule's next fires, read in zone (a "tz" in the
// text wins; none: the scenario's).
export async function preview(text, zone) {
  const q = new URLSearchParams({ when: text, n: "3", scenario: scenario });
  if (zone) q.set("tz", zone);
  return getJSON("/api/v1/schedule/preview?" + q);
}

let previewTimer = null;
// showPreview shows, under the editor ed, the next fires of the schedule
// typed, once typing pauses.
function showPreview(ed) {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(async () => {
    const text = ed.input.value.trim();
    if (!text) { ed.preview.textContent = ""; return; }
    const row = rowOf(ed.td).data();
    const zone = zoneOfText(text) || rowZone(row);
    const r = await preview(text, zone);
    if (st.editing !== ed || ed.input.value.trim() !== text) return;
    if (r.body.error) { ed.preview.textContent = ""; cellError(ed.td, r.body.error); return; }
    cellError(ed.td, "");
    ed.preview.textContent = "→ " + r.body.canonical + "\n" + t("next") +
      r.body.fires.map((f) => inZone(f, zoneOfText(r.body.canonical) || zone)).join(" · ");
  }, 250);
}

// openEdit opens the editor of the cell td, if its column is editable;
// an editor open elsewhere is cancelled.
export function openEdit(td) {
  const col = colOf(td);
  if (!col || !col.editable || col.type === "switch") return;
  if (st.editing && st.editing.td === td) return;
  if (st.editing) cancelEdit();
  focusCell(td);
  const row = rowOf(td).data();
  const editor = editorOf(col, row);
  const input = editor.input;
  const ed = { id: row.id, col: col, td: td, input: input, read: editor.read, initial: editor.read(), preview: document.createElement("span") };
  ed.preview.className = "preview";
  td.classList.add("editing");
  td.replaceChildren(...editor.nodes);
  if (col.type === "schedule") {
    td.appendChild(ed.preview);
    input.addEventListener("input", () => showPreview(ed));
    showPreview(ed);
  }
  input.addEventListener("keydown", (e) => {
    // An input method (Chinese, Japanese …) takes Enter to pick its
    // candidate: that Enter is the IME's, not a save.
    if (e.isComposing || e.keyCode === 229) return;
    // Shift+Enter starts a new line in a multi-line editor (params).
    if (e.key === "Enter" && e.shiftKey && input.tagName === "TEXTAREA") return;
    if (e.key === "Enter") { e.preventDefault(); save(ed, "down"); }
    else if (e.key === "Escape") { e.preventDefault(); cancelEdit(); backToCell(ed.td); }
    else if (e.key === "Tab") { e.preventDefault(); save(ed, e.shiftKey ? -1 : 1); }
  });
  st.editing = ed;
  input.focus();
  if (input.select) input.select();
}

// closeEdit closes the editor ed; a draw a poll left waiting follows.
function closeEdit(ed) {
  if (st.editing === ed) st.editing = null;
  ed.td.classList.remove("editing");
  setTimeout(settle, 0);
}

// cancelEdit closes the open editor, if any, without saving.
export function cancelEdit() {
  const ed = st.editing;
  if (!ed) return;
  closeEdit(ed);
  rowOf(ed.td).invalidate("data");
}

// save PATCHes the edited field with the row's version; a refusal keeps
// the input and what was typed, with the server's message beside it.
// move is where to go once saved: "down" (Enter) focuses the cell below,
// 1 or -1 (Tab, Shift+Tab) edits the next or previous editable cell of
// the row.
async function save(ed, move) {
  const row = rowOf(ed.td).data();
  const value = ed.read();
  const cur = row.fields ? row.fields[ed.col.field] : undefined;
  if (value === ed.initial) {
    closeEdit(ed);
    rowOf(ed.td).invalidate("data");
    moveOn(ed, move);
    return;
  }
  if (ed.col.type === "schedule" && String(value).trim() !== "") {
    const p = await preview(value.trim());
    if (p.body.error) { cellError(ed.td, p.body.error); ed.input.focus(); return; }
  }
  const patch = {};
  patch[ed.col.field] = value === "" ? null : value;
  const r = await getJSON(api + "/rows/" + encodeURIComponent(row.id), {
    method: "PATCH",
    headers: { "Content-Type": "application/json", "If-Match": '"' + row.version + '"' },
    body: JSON.stringify(patch),
  });
  if (!r.ok) { cellError(ed.td, r.body.error); ed.input.focus(); return; }
  closeEdit(ed);
  rowOf(ed.td).data(withTask(r.body, row));
  const was = {};
  was[ed.col.field] = cur === undefined ? null : cur;
  remember([{ id: row.id, fields: was, version: r.body.version }]);
  notice(t("saved"));
  moveOn(ed, move);
}

// moveOn goes where a save sends the keyboard (see save).
function moveOn(ed, move) {
  if (move === "down") { backToCell(ed.td); st.table.keys.move("down"); return; }
  if (move) openNext(ed, move);
  else backToCell(ed.td);
}

// One cell of the table has the keyboard (KeyTable, class "focus"): the
// arrows, Tab, Home/End and Page Up/Down move it; Enter or F2 edits it
// (Enter switches a row on or off in the active column); Esc leaves the
// table. The table itself takes the browser's focus (tabindex 0), so Tab
// reaches it and a closed editor gives the focus back to it.
function focusCell(td) {
  if (st.table.keys.enabled() && !td.classList.contains("focus")) st.table.cell(td).focus();
}
// backToCell gives the keyboard back to the table, on the cell td.
function backToCell(td) {
  if (td.isConnected) focusCell(td);
  document.getElementById("rows").focus({ preventScroll: true });
}
// onCellKey is KeyTable's key handler: Enter or F2 on a cell edits it
// (in the active column, switches the row on or off).
export function onCellKey(e, dt, code, cell, orig) {
  if (st.editing || orig.isComposing || code === 229) return;
  if (code !== 13 && code !== 113) return; // Enter, F2
  const td = cell.node();
  const col = colOf(td);
  if (!col) return;
  orig.preventDefault();
  if (col.type === "switch") {
    const sw = td.querySelector("input.act-switch");
    if (sw && !sw.disabled) sw.click();
    return;
  }
  if (col.editable) openEdit(td);
}
// The table takes the browser's focus from the keyboard (Tab): its
// first editable cell of the page gets the keyboard unless one has it.
export function onTableFocus(e) {
  const el = document.getElementById("rows");
  if (e.target !== el || !el.matches(":focus-visible") || st.table.cell({ focused: true }).any()) return;
  const first = shownCols().find((i) => st.cols[i].editable && st.cols[i].type !== "switch");
  if (first === undefined) return;
  const cell = st.table.cell(":eq(0)", toCur(first), { page: "current" });
  if (cell.any()) cell.focus();
}

// openNext edits the editable cell move (1 or -1) cells from ed's.
function openNext(ed, move) {
  const editable = shownCols().filter((i) => st.cols[i].editable && st.cols[i].type !== "switch");
  const at = editable.indexOf(st.cols.indexOf(ed.col));
  const next = editable[at + move];
  if (next === undefined) return;
  const node = st.table.cell(ed.td.closest("tr"), toCur(next)).node();
  if (node) openEdit(node);
}
