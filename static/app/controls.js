// The table page's controls wired to what they do: the keyboard over the
// table, the rows' buttons and boxes, the bulk bar, the params editor,
// the drawer and the tools above the table.
import { askDelete, answerDelete, exportURL, importCSV, setTaskState, toggleActive } from "./rowactions.js";
import { taskIDOf } from "./cells.js";
import { panel } from "./config.js";
import { showExplain } from "../lib/explain.js";
import { drawer, openParams, paramLine, runNow, runWithParams, showRuns } from "./drawer.js";
import { onCellKey, onTableFocus, openEdit } from "./editing.js";
import { t } from "./i18n.js";
import { floatingHeader, freezeColumns, saveLayout } from "./layout.js";
import { onAutoFill, onPaste } from "./pastefill.js";
import { onNavKey, onSheetKey } from "./sheetkeys.js";
import { bulk, clearSelection, selectAllMatches, selectedCount, selectPage, showBulk } from "./selection.js";
import { st } from "./state.js";
import { undo } from "./undo.js";

// guardControls keeps what is typed into a control (the cell editor, the
// search box, a form) the control's: KeyTable hears every keydown of the
// document. Called before the table is built, its listener runs first.
export function guardControls() {
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("input, select, textarea, button, [contenteditable]")) e.stopImmediatePropagation();
  });
}

// wireKeys wires the keyboard: the table's focus, Enter and F2 on a cell,
// typing, Delete, Home/End and Page Up/Down on a cell (sheetkeys.js),
// paste, fill, and Ctrl+Z (⌘Z) outside a control (a control's own undo
// stays its own: guardControls stops this listener for them).
function wireKeys() {
  const tableEl = document.getElementById("rows");
  tableEl.tabIndex = 0;
  tableEl.setAttribute("aria-label", t("table.keys"));
  tableEl.addEventListener("focus", onTableFocus);
  st.table.on("key", onCellKey);
  st.table.on("key", onSheetKey);
  document.addEventListener("keydown", onNavKey, true);
  st.table.on("autoFill", onAutoFill);
  document.addEventListener("paste", onPaste);
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === "z" && !st.editing) { e.preventDefault(); undo(); }
  });
  const undoButton = document.getElementById("undo");
  undoButton.title = t("undo.title");
  undoButton.addEventListener("click", undo);
}

// onRowClick routes a click in the table's body: a row's buttons, else
// an editable cell opens its editor.
function onRowClick(e) {
  const target = e.target;
  // An item of a row's actions menu: the menu closes, its toggle keeps
  // the focus (a panel the item opens gives the focus back there).
  const menu = target.closest(".row-menu");
  if (menu && target.matches(".dropdown-item")) menu.querySelector(".row-menu-toggle").focus();
  if (target.matches("button.del")) { askDelete(target); return; }
  if (target.matches("button.del-yes, button.del-no")) { answerDelete(target, target.matches(".del-yes")); return; }
  if (target.matches("button.runs")) { showRuns(taskIDOf(target), false); return; }
  if (target.matches("button.why")) { showExplain(taskIDOf(target), ""); return; }
  if (target.matches("button.run-now")) { runNow(target, taskIDOf(target)); return; }
  if (target.matches("button.run-params")) { openParams(taskIDOf(target)); return; }
  if (target.closest("td.editing") || target.matches("input.act-switch, button, select")) return;
  const td = target.closest("td.editable");
  if (td) openEdit(td);
}

// wireRows wires the rows: their clicks, switches, task states and boxes,
// and the table's own events.
function wireRows() {
  const tbody = document.querySelector("#rows tbody");
  tbody.addEventListener("click", onRowClick);
  tbody.addEventListener("change", (e) => {
    if (e.target.matches("input.act-switch")) toggleActive(e.target);
    if (e.target.matches("select.task-state")) setTaskState(e.target);
  });
  // The header exists only once DataTables has its language file (zh
  // loads it asynchronously): listen on the document, not the checkbox.
  document.addEventListener("change", (e) => { if (e.target.id === "select-all") selectPage(e.target.checked); });
  st.table.on("draw", showBulk);
  st.table.on("columns-reordered", saveLayout);
  st.table.on("fixedheader-mode", floatingHeader);
  st.table.on("draw column-visibility columns-reordered", freezeColumns);
  window.addEventListener("resize", freezeColumns);
  // Select keeps its list of selected ids in a handler of the same
  // events, registered at its init (later than this one where the
  // language file loads first): the page reads the list after it.
  st.table.on("select deselect", (e, dt, type) => { if (type === "row") setTimeout(showBulk, 0); });
}

// on wires the click of the element with id to f.
function on(id, f) { document.getElementById(id).addEventListener("click", f); }

// wireBulk wires the bulk bar; Delete asks first.
function wireBulk() {
  on("select-matches", selectAllMatches);
  on("select-clear", clearSelection);
  on("bulk-activate", () => bulk("activate"));
  on("bulk-deactivate", () => bulk("deactivate"));
  on("bulk-delete", () => {
    document.getElementById("bulk-sure").textContent = t("bulk.sure", { n: selectedCount() });
    document.getElementById("bulk-confirm").hidden = false;
  });
  on("bulk-yes", () => bulk("delete"));
  on("bulk-no", () => { document.getElementById("bulk-confirm").hidden = true; });
}

// wireTools wires the params editor, the drawer, import and export.
function wireTools() {
  document.getElementById("params-form").addEventListener("submit", runWithParams);
  on("params-add", () => paramLine("", "").focus());
  on("params-cancel", () => panel.close(document.getElementById("params")));
  const file = document.getElementById("import-file");
  on("import-csv", () => file.click());
  file.addEventListener("change", () => {
    if (file.files.length) importCSV(file.files[0]);
    file.value = "";
  });
  on("drawer-close", () => panel.close(document.getElementById("drawer")));
  on("runs-older", () => showRuns(drawer.taskID, true));
  on("export-csv", () => {
    if (st.lastQuery) location.href = exportURL();
  });
}

// wireControls wires every control of the page to the table built.
export function wireControls() {
  wireKeys();
  wireRows();
  wireBulk();
  wireTools();
}
