// cronsheet's web table: a DataTables table in server-side mode over
// /api/v1/scenarios/:scenario/table, edited like a spreadsheet through the
// rows API (PATCH with If-Match). Everything a row holds is shown as text:
// values go through esc() or textContent, never into HTML as they are.
//
// This module starts the page; the rest is in app/, a module per concern.
// jQuery and DataTables are classic scripts loaded before it (modules run
// once the page is parsed, after them).
import { captureErrors, dtLanguage, esc, getJSON, notice, setupLanguage, dtDone } from "./lib/core.js";
import { allows, lockPage, myRole } from "./lib/role.js";
import { buildAddForm } from "./app/addrow.js";
import { taskIDOfRow } from "./app/cells.js";
import { buildChips } from "./app/chips.js";
import { api, params, scenarioKey } from "./app/config.js";
import { guardControls, wireControls } from "./app/controls.js";
import { lang, t, tOr } from "./app/i18n.js";
import { buildColumnList, loadLayout } from "./app/layout.js";
import { fetchPage, pollStats, setSlowMS, startPolling } from "./app/polling.js";
import { actionCell, renderer, selectCell, stateCell } from "./app/render.js";
import { exportURL, importCSV } from "./app/rowactions.js";
import { buildScenarios } from "./app/scenarios.js";
import { selectedCount, selection } from "./app/selection.js";
import { st } from "./app/state.js";
import { validZone } from "./app/zones.js";

captureErrors();

// loadColumns asks for the scenario's columns and keeps what the page is
// built from; it returns false when the page cannot be built.
async function loadColumns() {
  const r = await getJSON(api + "/columns");
  if (!r.ok && r.status === 404 && !params.get("scenario") && localStorage.getItem(scenarioKey)) {
    // The scenario chosen last is gone from the config: back to memos.
    localStorage.removeItem(scenarioKey);
    location.reload();
    return false;
  }
  if (!r.ok) { notice(r.body.error, true); return false; }
  st.cols = r.body.columns;
  buildScenarios(r.body.scenarios || []);
  // A column is titled by its label in the page's language (the
  // scenario's config), else by its role where the language has a word
  // for it (Chinese), else as the server titles it (the en label, else
  // the field's name).
  for (const c of st.cols) c.title = (c.labels && c.labels[lang]) || tOr("col." + c.role, c.title);
  st.searchMin = r.body.search_min || 3;
  st.searchMinCJK = r.body.search_min_cjk || st.searchMin;
  st.defaults = r.body.defaults || {};
  st.scenarioZone = validZone(r.body.tz) ? r.body.tz : "UTC";
  st.tzField = r.body.tz_field || "";
  return true;
}

// tableColumns are DataTables' columns: the scenario's, then the page's
// own (the task's state, the buttons, the selection box); the layout kept
// hides some.
function tableColumns(layout) {
  const columns = st.cols.map((c) => ({
    data: c.data, title: c.title, orderable: c.orderable, searchable: c.searchable,
    defaultContent: "", render: renderer(c), type: "string",
    className: "dt-head-left dt-body-left kt" + (c.editable && c.type !== "switch" ? " editable" : ""),
  }));
  columns.push({
    data: null, title: esc(t("state")), orderable: false, searchable: false, defaultContent: "",
    className: "task-state-cell", render: stateCell,
  });
  columns.push({ data: null, title: "", orderable: false, searchable: false, defaultContent: "", className: "row-actions", render: actionCell });
  columns.push({
    data: null, title: '<input type="checkbox" id="select-all" aria-label="' + esc(t("select.all")) + '">',
    orderable: false, searchable: false, defaultContent: "", className: "sel", render: selectCell,
  });
  st.cols.forEach((c, i) => { if (layout.hidden.includes(c.data)) columns[i].visible = false; });
  return columns;
}

// defaultOrderColumn is the column the table is first sorted by: next
// fire (the soonest first, the rows that do not fire after them), else
// the first column. It is an index in cols (ColReorder moves it with its
// column); a header clicked sorts by another.
function defaultOrderColumn() {
  const i = st.cols.findIndex((c) => c.data === "next_fire" && c.orderable);
  return i >= 0 ? i : 0;
}

// createTable builds the DataTable over columns, in the layout kept.
function createTable(columns, layout) {
  return new DataTable("#rows", {
    serverSide: true, processing: false, ajax: fetchPage, rowId: "id",
    // The keyboard moves over the data columns (not the buttons); copy
    // (Ctrl+C) copies the focused cell; paste is the page's own (one
    // validated batch, app/pastefill.js). No hidden capture input: the
    // table itself is focusable.
    keys: { columns: ".kt", clipboard: { copy: true, paste: false }, tabIndex: -1, blurable: true },
    // A row is (de)selected by its box only (cells are for editing);
    // Shift+click selects a range. The page draws the boxes itself.
    select: { style: "multi+shift", selector: "td.sel", info: false, headerCheckbox: false },
    // The focused cell's drag handle fills the cells dragged over
    // (AutoFill); the page saves them (onAutoFill).
    autoFill: { columns: ".editable", update: false },
    // Headers drag to reorder (ColReorder); the layout kept is applied.
    colReorder: layout.order ? { order: layout.order } : true,
    // The header stays in view while the page scrolls (FixedHeader), on
    // a screen wide enough that the table does not scroll sideways in
    // its own box (a phone scrolls the table there instead).
    fixedHeader: window.matchMedia("(min-width: 700px)").matches,
    columns: columns, order: [[defaultOrderColumn(), "asc"]], orderMulti: false,
    pageLength: 25, lengthMenu: [10, 25, 50, 100, 500], searchDelay: 300,
    // DataTables' sort labels are not in its i18n file: they are given
    // here.
    language: lang === "zh" ? Object.assign(dtLanguage(), { aria: {
      orderable: t("dt.orderable"), orderableReverse: t("dt.orderableReverse"), orderableRemove: t("dt.orderableRemove"),
    } }) : dtLanguage(),
    // DataTables 2 labels its paging in English whatever the language.
    initComplete: () => dtDone(t),
  });
}

// exposeForTests gives the browser tests what they read of the page
// (window.cronsheet).
function exposeForTests() {
  window.cronsheet = {
    table: st.table,
    polls: () => pollStats().polls,
    answers: () => pollStats().answers,
    pollDelay: () => pollStats().delay,
    setSlowMS: setSlowMS,
    editing: () => st.editing,
    exportURL: exportURL,
    importCSV: importCSV,
    selected: () => selection().all ? ["*"] : selection().ids.slice(),
    selectedCount: () => selectedCount(),
    taskState: (id) => {
      const r = st.table.rows().data().toArray().find((x) => taskIDOfRow(x) === id);
      return r && r.task ? r.task.state : undefined;
    },
  };
}

// readOnlyControls are the table page's controls that change rows or
// tasks: a viewer's page hides them or, where they also show a value
// (the Active switch, the task's state), disables them.
const readOnlyControls = {
  disable: "input.act-switch, select.task-state",
  hide: "#add-row, #import-csv, #undo, #params, #sheet-hint, #bulk-activate, #bulk-deactivate, #bulk-delete, " +
    "button.run-now, button.run-params, button.del, button.del-yes, button.del-no",
};

// start builds the page: its language, the scenario's columns, the form,
// the chips, the table and its controls; then the polls begin.
async function start() {
  setupLanguage(t);
  const locked = lockPage(t, "editor", readOnlyControls);
  if (!await loadColumns()) return;
  // A role that may only read edits no cell: no editor, paste or fill.
  st.readOnly = await locked;
  if (st.readOnly) for (const c of st.cols) c.editable = false;
  // Importing CSV is an admin's.
  if (!allows(await myRole(), "admin")) document.getElementById("import-csv").hidden = true;
  buildAddForm();
  buildChips();
  st.layoutKeys = st.cols.map((c) => c.data).concat(["_state", "_actions", "_select"]);
  const layout = loadLayout();
  const columns = tableColumns(layout);
  buildColumnList(layout.hidden);
  guardControls();
  st.table = createTable(columns, layout);
  wireControls();
  startPolling();
  exposeForTests();
  document.body.dataset.ready = "1";
}

start();
