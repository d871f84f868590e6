// How the table page draws a row: its state, its cells, its task's state,
// its buttons and its selection box. Everything a row holds goes through
// esc(); nothing from the server reaches the page as HTML.
import { esc, locale } from "../lib/core.js";
import { t, tOr } from "./i18n.js";
import { isSelected } from "./selection.js";
import { confirming, st } from "./state.js";
import { timeCell } from "./zones.js";

// isOn reads a switch field's value.
function isOn(v) {
  if (v == null || v === "") return true; // the scenario's default: active
  return v === true || v === 1 || v === "1" || v === "true";
}
// switchOf is row's switch: its switch field, else is_active.
function switchOf(row) {
  const sw = st.cols && st.cols.find((c) => c.type === "switch");
  return sw && row.fields ? isOn(row.fields[sw.field]) : row.is_active === 1;
}

// rowState is the one state a row is shown in, from the row and its task
// (row.task, sent with the page; none before the row's first sync):
//   state: enabled, paused, closed, error, done or failing;
//   why: the reason, written under the state ("" when enabled);
//   armed: a next fire is scheduled; run: Run now can fire it.
// The order follows what stops a fire first: an invalid row, a finished
// or closed task, a row switched off, a stopped task (it still runs by
// hand).
// A failing row (row.state "failing" in the table answer: its newest
// finished run ended dead, timeout or rejected; the next success clears
// it) that would read enabled or done reads failing, its last error
// written under it; paused and closed rows keep the state the user set.
export function rowState(row) {
  const rs = baseState(row);
  if (row.state !== "failing" || (rs.state !== "enabled" && rs.state !== "done")) return rs;
  const why = row.last_error ? t("why.failing.err", { error: row.last_error }) : t("why.failing");
  return { state: "failing", why: why, armed: rs.armed, run: rs.run };
}
// baseState is a row's state from the row and its task alone.
function baseState(row) {
  const tk = row.task;
  if (row.is_active === -1) return { state: "error", why: row.error || t("why.error"), armed: false, run: false };
  if (tk && tk.done) return { state: "done", why: t("why.done"), armed: false, run: false };
  if (tk && tk.state === "closed") return { state: "closed", why: t("why.closed"), armed: false, run: false };
  if (!tk) {
    // Not synced yet: the switch says what it will be.
    const on = row.is_fetched === 0 ? switchOf(row) : row.is_active === 1;
    return { state: on ? "enabled" : "paused", why: on ? t("why.notask") : t("why.off"), armed: false, run: false };
  }
  if (row.is_active === 0 || !tk.enabled) return { state: "paused", why: t("why.off"), armed: false, run: false };
  if (tk.state === "stopped") return { state: "paused", why: t("why.stopped"), armed: false, run: true };
  return { state: "enabled", why: "", armed: true, run: true };
}
// ofRow names a row's control after what it does and the row's id, so
// a screen reader tells one row's "Run now" from the next.
export function ofRow(what, row) { return t("of.row", { what: what, row: row.id }); }
// renderer is DataTables' render of the column col.
export function renderer(col) {
  return function (data, type, row) {
    if (type !== "display") return data == null ? "" : data;
    switch (col.type) {
      case "switch":
        return '<input type="checkbox" class="act-switch" aria-label="' + esc(ofRow(t("switch.active"), row)) + '"' + (isOn(data) ? " checked" : "") + ">";
      case "status": {
        const rs = rowState(row);
        let s = '<span class="st st-' + rs.state + '">' + esc(t("st." + rs.state)) + "</span>";
        if (row.is_fetched === 0) s += ' <span class="st-sync" title="' + esc(t("st.sync")) + '" aria-label="' + esc(t("st.sync")) + '">⟳</span>';
        if (rs.why) s += '<span class="st-why" title="' + esc(rs.why) + '">' + esc(rs.why) + "</span>";
        return s;
      }
      case "time":
        if (col.data === "next_fire" && !rowState(row).armed) return '<span class="not-scheduled">' + esc(t("next.none")) + "</span>";
        if (!data) return esc(t("never"));
        return timeCell(data, row);
      case "enum":
        // An option in the page's language (a channel by its word). A
        // row that leaves its channel out is sent on the scenario's
        // default: shown muted and titled so, never written into the row.
        if (data == null || data === "") return col.role === "task_type" ? defaultChannel(col) : "";
        return esc(col.role === "task_type" ? tOr("ch." + data, String(data)) : tOr("opt." + col.role + "." + data, String(data)));
      default:
        if (col.data === "last_status") {
          let s = "";
          if (data) {
            const cls = /^(done|ok|accepted)$/.test(data) ? "last-ok" : "last-bad";
            s = '<span class="' + cls + '" data-state="' + esc(data) + '">' + esc(tOr("oc." + data, data)) + "</span>";
          }
          return s + outcomeStrip(row.outcomes);
        }
        return esc(data);
    }
  };
}

// defaultChannel is the channel cell of a row that names none: the
// scenario's default channel, muted, titled "default channel" ("" when
// the scenario has none).
function defaultChannel(col) {
  const def = st.defaults[col.field];
  if (def == null || def === "") return "";
  return '<span class="ch-default" title="' + esc(t("ch.default")) + '">' + esc(tOr("ch." + def, String(def))) + "</span>";
}

// outcomeStrip draws a row's last outcomes (the table answer's
// row.outcomes, newest first) as a strip of marks, oldest on the left,
// each titled with its state, time and error.
function outcomeStrip(list) {
  if (!list || !list.length) return "";
  const marks = list.slice(0, 10).reverse().map((o) => {
    const ok = o.state === "done";
    const word = t("oc." + o.state) === "oc." + o.state ? o.state : t("oc." + o.state);
    const title = word + " · " + new Date(o.fired_at).toLocaleString(locale()) + (o.error ? " · " + o.error : "");
    return '<span class="oc ' + (ok ? "oc-ok" : o.state === "cancelled" || o.state === "skipped" ? "oc-muted" : "oc-bad") +
      '" data-state="' + esc(o.state) + '" title="' + esc(title) + '" aria-label="' + esc(title) + '" role="img"></span>';
  });
  return '<span class="oc-strip" aria-label="' + esc(t("oc.strip")) + '">' + marks.join("") + "</span>";
}
// Each row comes with its task's state (row.task, from the same answer
// as the page): the table sends no request per row to show it.
export function stateCell(data, type, row) {
  if (type !== "display") return "";
  const cur = row.task && row.task.state;
  let html = '<select class="task-state" aria-label="' + esc(ofRow(t("state"), row)) + '"' + (cur ? "" : " disabled") + ">";
  if (!cur) html += '<option value="">' + esc(t("state.unknown")) + "</option>";
  for (const s of ["running", "stopped", "closed"]) {
    html += '<option value="' + s + '"' + (s === cur ? " selected" : "") + ">" + esc(t("state." + s)) + "</option>";
  }
  return html + "</select>";
}

// actionCell draws a row's buttons, or the question of its delete.
export function actionCell(data, type, row) {
  if (type !== "display") return "";
  if (confirming.has(row.id)) {
    return "<span>" + esc(t("del.sure")) + '</span> <button type="button" class="del-yes">' + esc(t("yes")) +
      '</button> <button type="button" class="del-no">' + esc(t("no")) + "</button>";
  }
  // The row's actions are one menu (Bootstrap's dropdown, fixed to the
  // viewport so the table's scroll box does not clip it). Run now is
  // offered only when the row can fire; otherwise the item says why (its
  // title) instead of a refusal after the click.
  const rs = rowState(row);
  const no = rs.run ? "" : ' disabled title="' + esc(t("run.cannot", { why: rs.why })) + '"';
  const named = (key) => ' aria-label="' + esc(ofRow(t(key), row)) + '"';
  const item = (cls, key, extra) => '<li><button type="button" class="dropdown-item ' + cls + '"' + named(key) + extra + ">" + esc(t(key)) + "</button></li>";
  return '<div class="dropdown row-menu"><button type="button" class="btn btn-sm btn-outline-secondary row-menu-toggle" data-bs-toggle="dropdown"' +
    ' data-bs-popper-config=\'{"strategy":"fixed"}\' aria-expanded="false"' + named("actions") + ' title="' + esc(t("actions")) + '"><span aria-hidden="true">⋯</span></button>' +
    '<ul class="dropdown-menu dropdown-menu-end">' +
    item("run-now", "run.now", no) +
    item("run-params", "run.params", rs.run ? ' title="' + esc(t("run.params.title")) + '"' : no) +
    item("runs", "runs", "") +
    item("why", "why", ' title="' + esc(t("why.hint")) + '"') +
    '<li><hr class="dropdown-divider"></li>' +
    item("del", "del", "") + "</ul></div>";
}

// selectCell draws a row's selection box.
export function selectCell(data, type, row) {
  return type !== "display" ? "" :
    '<input type="checkbox" class="sel-row" aria-label="' + esc(ofRow(t("select"), row)) + '"' + (st.table && isSelected(row.id) ? " checked" : "") + ">";
}
