// cronsheet's web table: a DataTables table in server-side mode over
// /api/v1/scenarios/:scenario/table, edited like a spreadsheet through the
// rows API (PATCH with If-Match). Everything a row holds is shown as text:
// values go through esc() or textContent, never into HTML as they are.
(function () {
  "use strict";

  // Script errors are kept for the browser tests' failure reports.
  const errors = (window.cronsheetErrors = []);
  window.addEventListener("error", (e) => errors.push(String(e.message)));
  window.addEventListener("unhandledrejection", (e) => errors.push(String(e.reason && (e.reason.stack || e.reason))));

  const params = new URLSearchParams(location.search);
  // The scenario shown: the URL's (?scenario=), else the one chosen last
  // (the switcher keeps it in localStorage), else memos.
  const scenarioKey = "cronsheet.scenario";
  const scenario = params.get("scenario") || localStorage.getItem(scenarioKey) || "memos";
  const pollMS = Math.max(250, Number(params.get("poll")) || 2000);
  const api = "/api/v1/scenarios/" + encodeURIComponent(scenario);
  // Panels slide over from the right (session.js; a page without it shows
  // them in place).
  const panel = window.cronsheetPanel || {
    open: (el, focus) => { el.hidden = false; if (focus) focus.focus(); },
    close: (el) => { el.hidden = true; },
  };

  // ---- language ----------------------------------------------------------
  const dict = {
    en: {
      "nav.table": "Table", "nav.outbox": "Outbox", "add.title": "New row", "add.button": "Add row", "add.default": "(default)", "tz.local": "{t} here", "add.tz": "time zone",
      "chips": "Filters", "chip.errors": "Errors", "chip.off": "Off", "chip.due": "Due within 1 h", "chip.count": "{label} ({n})",
      "st.enabled": "Enabled", "st.paused": "Paused", "st.closed": "Closed", "st.error": "Error", "st.done": "Done",
      "oc.strip": "last outcomes, oldest first", "oc.done": "done", "oc.dead": "dead", "oc.timeout": "timed out",
      "oc.rejected": "rejected", "oc.cancelled": "cancelled", "oc.skipped": "skipped",
      "oc.accepted": "accepted", "oc.failed": "failed",
      "st.sync": "syncing: the edit is on its way to the scheduler",
      "why.error": "The row is invalid.", "why.off": "Switched off: nothing fires.",
      "why.stopped": "Task stopped: it fires only on Run now.", "why.closed": "Task closed: it never fires.",
      "why.done": "Done: no slot is left to fire.", "why.notask": "Not synced yet: there is no task to run.",
      "next.none": "—, not scheduled", "run.cannot": "Cannot run: {why}",
      "del": "Delete", "del.sure": "Delete this row?", "yes": "Yes", "no": "No",
      "search.short": "Type at least {n} characters to search.", "added": "Row {id} added.",
      "deleted": "Row {id} deleted.", "saved": "Saved.", "next": "next: ",
      "in": "in {d}", "ago": "{d} ago", "now": "now", "never": "—",
      "s": "{n} s", "m": "{n} min", "h": "{n} h", "d": "{n} d",
      "import": "Import CSV", "imported": "Imported {n} rows.", "import.line": "line {line}",
      "bulk.activate": "Activate", "bulk.deactivate": "Deactivate", "bulk.delete": "Delete",
      "bulk.count": "{n} selected:", "bulk.count.all": "all {n} matches selected:",
      "select.matches": "Select all {n} matches", "select.clear": "Clear selection", "bulk.sure": "Delete {n} rows?", "bulk.done": "{action}: {ok} done, {failed} failed.",
      "select": "select row", "of.row": "{what}, row {row}", "select.all": "select the rows of this page",
      "export": "Export CSV", "runs": "Runs", "runs.title": "Runs of", "runs.older": "Older runs", "runs.none": "No runs yet.",
      "run.now": "Run now", "run.ok": "{id} triggered.",
      "nav.targets": "Targets", "nav.flows": "Flows", "nav.runs": "Runs", "nav.jobs": "Jobs", "nav.status": "Status", "nav.audit": "Audit", "nav.users": "Users", "runs.all": "All runs of this task",
      "state": "Task state", "state.running": "running", "state.stopped": "stopped", "state.closed": "closed",
      "state.unknown": "—", "state.ok": "Task {id} is {state} now.",
      "run.params": "Params…", "run.params.title": "Run now with one-off params", "params.title": "Run now with params:", "params.add": "Add param",
      "params.key": "key", "params.value": "value", "params.run": "Run now", "params.cancel": "Cancel",
      "params.nokey": "line {n}: a param needs a key", "params.remove": "remove",
      "run.rejected": "{n} of {total} runs rejected: {why}",
      "switch.active": "active", "pagination": "pagination",
      "table.keys": "Rows: arrow keys move between cells, Enter or F2 edits, Esc leaves the table",
      "sheet.hint": "Keyboard: arrows move, Enter or F2 edits, Ctrl+V pastes tab-separated cells from the focused cell, its corner handle fills down (both saved all or nothing), Ctrl+Z undoes your last edit.",
      "cols": "Columns", "cols.reset": "Reset columns", "cols.list": "Columns shown",
      "undo": "Undo", "undo.title": "Undo your last edit on this page (Ctrl+Z): the old values are saved again through the rows API, so the audit trail records the undo too.",
      "undo.done": "Undone: {n} cells restored.", "undo.none": "Nothing to undo.",
      "paste.done": "Pasted {n} cells.", "fill.done": "Filled {n} cells.", "paste.fit": "Nothing pasted: {n} rows do not fit below this cell on this page.",
      "paste.col": "Nothing pasted: column {col} cannot be edited.", "paste.wide": "Nothing pasted: the text has more columns than the table right of this cell.",
      "scenario": "Table shown", "scn.memos": "Memos",
    },
    zh: {
      "nav.table": "表格", "nav.outbox": "发件箱", "add.title": "新行", "add.button": "添加", "add.default": "（默认）", "tz.local": "本地 {t}", "add.tz": "时区",
      "chips": "筛选", "chip.errors": "错误", "chip.off": "已停用", "chip.due": "1 小时内触发", "chip.count": "{label}（{n}）",
      "st.enabled": "已启用", "st.paused": "已暂停", "st.closed": "已关闭", "st.error": "错误", "st.done": "已完成",
      "oc.strip": "最近结果（从旧到新）", "oc.done": "成功", "oc.dead": "失败", "oc.timeout": "超时",
      "oc.rejected": "被拒绝", "oc.cancelled": "已取消", "oc.skipped": "已跳过",
      "oc.accepted": "已接受", "oc.failed": "失败待重试",
      "st.sync": "同步中：修改正在交给调度器",
      "why.error": "此行无效。", "why.off": "已停用：不会触发。",
      "why.stopped": "任务已停止：只在“立即运行”时触发。", "why.closed": "任务已关闭：不会再触发。",
      "why.done": "已完成：没有剩余的触发时间。", "why.notask": "尚未同步：还没有可运行的任务。",
      "next.none": "—，未排程", "run.cannot": "无法运行：{why}",
      "del": "删除", "del.sure": "删除这一行？", "yes": "是", "no": "否",
      "search.short": "至少输入 {n} 个字符再搜索。", "added": "已添加 {id}。",
      "deleted": "已删除 {id}。", "saved": "已保存。", "next": "接下来：",
      "in": "{d}后", "ago": "{d}前", "now": "现在", "never": "—",
      "s": "{n} 秒", "m": "{n} 分钟", "h": "{n} 小时", "d": "{n} 天",
      "import": "导入 CSV", "imported": "已导入 {n} 行。", "import.line": "第 {line} 行",
      "bulk.activate": "启用", "bulk.deactivate": "停用", "bulk.delete": "删除",
      "bulk.count": "已选 {n} 行：", "bulk.count.all": "已选全部 {n} 个匹配行：",
      "select.matches": "选择全部 {n} 个匹配行", "select.clear": "清除选择", "bulk.sure": "删除这 {n} 行？", "bulk.done": "{action}：成功 {ok}，失败 {failed}。",
      "select": "选择此行", "of.row": "{what}（行 {row}）", "select.all": "选择本页所有行",
      "export": "导出 CSV", "runs": "运行记录", "runs.title": "运行记录：", "runs.older": "更早的记录", "runs.none": "还没有运行记录。",
      "run.now": "立即运行", "run.ok": "已触发 {id}。",
      "nav.targets": "目标", "nav.flows": "任务流", "nav.runs": "运行记录", "nav.jobs": "作业", "nav.status": "状态", "nav.audit": "审计", "nav.users": "用户", "runs.all": "此任务的全部运行记录",
      "state": "任务状态", "state.running": "运行", "state.stopped": "停止", "state.closed": "关闭",
      "state.unknown": "—", "state.ok": "任务 {id} 现在是{state}状态。",
      "run.params": "参数…", "run.params.title": "带一次性参数立即运行", "params.title": "带参数立即运行：", "params.add": "添加参数",
      "params.key": "键", "params.value": "值", "params.run": "立即运行", "params.cancel": "取消",
      "params.nokey": "第 {n} 行：参数需要键", "params.remove": "删除",
      "run.rejected": "{total} 个运行中有 {n} 个被拒绝：{why}",
      // Column titles by role (the server's titles are the field names).
      "col.task_id": "编号", "col.title": "标题", "col.task_para": "内容", "col.cron_para": "时间",
      "col.task_type": "方式", "col.to": "接收人", "col.active": "启用", "col.is_active": "状态",
      "col.next_fire": "下次触发", "col.last_fire": "上次触发", "col.last_status": "上次结果",
      "ch.email": "邮件", "ch.sms": "短信", "ch.outbox": "发件箱", "switch.active": "启用",
      "dt.orderable": "：点击排序", "dt.orderableReverse": "：点击倒序排序", "dt.orderableRemove": "：点击取消排序",
      "pagination": "分页",
      "table.keys": "数据行：方向键在单元格间移动，Enter 或 F2 编辑，Esc 离开表格",
      "sheet.hint": "键盘：方向键移动，Enter 或 F2 编辑，Ctrl+V 从当前单元格起粘贴以制表符分隔的单元格，拖动其右下角的手柄向下填充（两者都是全部保存或全不保存），Ctrl+Z 撤销你的上一次修改。",
      "cols": "列", "cols.reset": "恢复默认列", "cols.list": "显示的列",
      "undo": "撤销", "undo.title": "撤销你在本页的上一次修改（Ctrl+Z）：旧值通过行接口重新保存，审计记录中也会留下这次撤销。",
      "undo.done": "已撤销：恢复了 {n} 个单元格。", "undo.none": "没有可撤销的修改。",
      "paste.done": "已粘贴 {n} 个单元格。", "fill.done": "已填充 {n} 个单元格。", "paste.fit": "未粘贴：本页此单元格以下放不下 {n} 行。",
      "paste.col": "未粘贴：列“{col}”不能编辑。", "paste.wide": "未粘贴：文本的列数超过了此单元格右侧的列数。",
      "scenario": "显示的表格", "scn.memos": "备忘",
    },
  };
  const lang = localStorage.getItem("cronsheet.lang") ||
    ((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en");
  function t(key, vars) {
    let s = (dict[lang] && dict[lang][key]) || dict.en[key] || key;
    for (const k in vars || {}) s = s.replace("{" + k + "}", vars[k]);
    return s;
  }
  // tOr is t(key) when a word is known for key, else fallback.
  function tOr(key, fallback) {
    const s = t(key);
    return s === key ? fallback : s;
  }

  function esc(v) {
    return String(v == null ? "" : v).replace(/[&<>"']/g, (c) =>
      ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  function notice(msg, isError) {
    const el = document.getElementById("notice");
    el.textContent = msg || "";
    el.className = isError ? "cell-error" : "";
  }

  // ---- times -------------------------------------------------------------
  function span(ms) {
    const s = Math.round(Math.abs(ms) / 1000);
    if (s < 60) return t("s", { n: s });
    if (s < 3600) return t("m", { n: Math.round(s / 60) });
    if (s < 86400) return t("h", { n: Math.round(s / 3600) });
    return t("d", { n: Math.round(s / 86400) });
  }
  function relative(iso) {
    const ms = Date.parse(iso) - Date.now();
    if (Math.abs(ms) < 1000) return t("now");
    return ms > 0 ? t("in", { d: span(ms) }) : t("ago", { d: span(ms) });
  }
  function exact(iso) {
    const d = new Date(iso);
    return d.toLocaleString() + " (" + iso + ")";
  }
  function refreshTimes() {
    for (const el of document.querySelectorAll(".rel[data-at]")) el.textContent = relative(el.dataset.at);
  }

  // ---- zones ---------------------------------------------------------------
  // A row's times are shown in the row's zone, named, never guessed: the
  // zone its schedule names ("… tz Asia/Shanghai"), else its zone field,
  // else the scenario's. The viewer's own time is written beside them
  // when it reads differently. A time not of today is shown with its date.
  const viewerZone = (() => {
    try { return Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return ""; }
  })();
  let scenarioZone = "UTC", tzField = "";
  function validZone(z) {
    if (!z) return false;
    try { new Intl.DateTimeFormat("en", { timeZone: z }); return true; } catch (e) { return false; }
  }
  function zoneOfText(text) {
    const m = /\btz\s+(\S+)\s*$/i.exec(String(text || ""));
    return m && validZone(m[1]) ? m[1] : "";
  }
  // rowZone is the zone a row's schedule is read in when it names none.
  function rowZone(row) {
    const z = tzField && row.fields ? String(row.fields[tzField] || "").trim() : "";
    return validZone(z) ? z : scenarioZone;
  }
  function zoneOf(row) {
    const when = cols && cols.find((c) => c.type === "schedule");
    return (when && row.fields && zoneOfText(row.fields[when.field])) || rowZone(row);
  }
  // inZone is an instant as a wall time of zone with the zone's short
  // name: "14:05 UTC" on the zone's today, "2026-12-01 14:05 GMT+8" else.
  function inZone(iso, zone) {
    const at = new Date(iso);
    const fmt = (d) => {
      const p = {};
      for (const x of new Intl.DateTimeFormat(lang === "zh" ? "zh-CN" : "en-GB", {
        timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short",
      }).formatToParts(d)) p[x.type] = x.value;
      return p;
    };
    const p = fmt(at), today = fmt(new Date());
    const day = p.year + "-" + p.month + "-" + p.day;
    const time = p.hour + ":" + p.minute + " " + p.timeZoneName;
    return day === today.year + "-" + today.month + "-" + today.day ? time : day + " " + time;
  }
  // timeCell is a row's instant: in the row's zone, the viewer's time
  // beside it when that reads differently, and how far it is from now.
  function timeCell(iso, row) {
    const zone = zoneOf(row);
    const shown = inZone(iso, zone);
    let html = '<time datetime="' + esc(iso) + '" data-zone="' + esc(zone) + '" title="' + esc(exact(iso) + " · " + zone) + '">' + esc(shown) + "</time>";
    if (viewerZone && viewerZone !== zone) {
      const local = inZone(iso, viewerZone);
      if (local !== shown) html += ' <span class="tz-local" title="' + esc(viewerZone) + '">' + esc(t("tz.local", { t: local })) + "</span>";
    }
    return html + ' <span class="rel" data-at="' + esc(iso) + '">' + esc(relative(iso)) + "</span>";
  }

  // ---- rendering -----------------------------------------------------------
  function isOn(v) {
    if (v == null || v === "") return true; // the scenario's default: active
    return v === true || v === 1 || v === "1" || v === "true";
  }
  // rowState is the one state a row is shown in, from the row and its task
  // (row.task, sent with the page; none before the row's first sync):
  //   state: enabled, paused, closed, error or done;
  //   why: the reason, written under the state ("" when enabled);
  //   armed: a next fire is scheduled; run: Run now can fire it.
  // The order follows what stops a fire first: an invalid row, a finished
  // or closed task, a row switched off, a stopped task (it still runs by
  // hand).
  function switchOf(row) {
    const sw = cols && cols.find((c) => c.type === "switch");
    return sw && row.fields ? isOn(row.fields[sw.field]) : row.is_active === 1;
  }
  function rowState(row) {
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
  function ofRow(what, row) { return t("of.row", { what: what, row: row.id }); }
  function renderer(col) {
    return function (data, type, row) {
      if (type !== "display") return data == null ? "" : data;
      switch (col.type) {
        case "switch":
          return '<input type="checkbox" class="act-switch" aria-label="' + esc(ofRow(t("switch.active"), row)) + '"' + (isOn(data) ? " checked" : "") + ">";
        case "status": {
          const st = rowState(row);
          let s = '<span class="st st-' + st.state + '">' + esc(t("st." + st.state)) + "</span>";
          if (row.is_fetched === 0) s += ' <span class="st-sync" title="' + esc(t("st.sync")) + '" aria-label="' + esc(t("st.sync")) + '">⟳</span>';
          if (st.why) s += '<span class="st-why">' + esc(st.why) + "</span>";
          return s;
        }
        case "time":
          if (col.data === "next_fire" && !rowState(row).armed) return '<span class="not-scheduled">' + esc(t("next.none")) + "</span>";
          if (!data) return esc(t("never"));
          return timeCell(data, row);
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

  // outcomeStrip draws a row's last outcomes (the table answer's
  // row.outcomes, newest first) as a strip of marks, oldest on the left,
  // each titled with its state, time and error.
  function outcomeStrip(list) {
    if (!list || !list.length) return "";
    const marks = list.slice(0, 10).reverse().map((o) => {
      const ok = o.state === "done";
      const word = t("oc." + o.state) === "oc." + o.state ? o.state : t("oc." + o.state);
      const title = word + " · " + new Date(o.fired_at).toLocaleString() + (o.error ? " · " + o.error : "");
      return '<span class="oc ' + (ok ? "oc-ok" : o.state === "cancelled" || o.state === "skipped" ? "oc-muted" : "oc-bad") +
        '" data-state="' + esc(o.state) + '" title="' + esc(title) + '" aria-label="' + esc(title) + '" role="img"></span>';
    });
    return '<span class="oc-strip" aria-label="' + esc(t("oc.strip")) + '">' + marks.join("") + "</span>";
  }

  // ---- server-side paging ------------------------------------------------
  let table, cols, searchMin = 3, searchMinCJK = 1, lastQuery = null, editing = null;
  let defaults = {}; // row field → the scenario's default (GET …/columns)
  const confirming = new Set(); // ids of rows showing a delete confirmation
  const busy = new Set(); // ids of rows with a toggle on its way to the server

  function tableQuery(d) {
    const q = new URLSearchParams();
    q.set("draw", d.draw);
    q.set("start", d.start);
    q.set("length", d.length);
    let s = ((d.search && d.search.value) || "").trim();
    const min = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(s) ? searchMinCJK : searchMin;
    if (s && Array.from(s).length < min) {
      notice(t("search.short", { n: min }));
      s = "";
    } else if (s) {
      notice("");
    }
    q.set("search[value]", s);
    if (chips.state) q.set("filter[state]", chips.state);
    if (chips.channel) q.set("filter[channel]", chips.channel);
    cols.forEach((c, i) => q.set("columns[" + i + "][data]", c.data));
    const by = d.order && d.order.length ? toOrig(d.order[0].column) : -1;
    if (by >= 0 && by < cols.length) {
      q.set("order[0][column]", by);
      q.set("order[0][dir]", d.order[0].dir === "desc" ? "desc" : "asc");
    }
    return q;
  }

  // ---- filter chips ----------------------------------------------------------
  // Above the table: Errors, Off, Due within 1 h (one of them at a time)
  // and a channel, each with its count; the server filters (filter[state],
  // filter[channel]) and counts (counts=1). The counts do not depend on the
  // page, the order, the search or the chip pressed, only on the rows, and
  // at 100k rows they cost the server far more than a page (a count per
  // chip, docs/BENCHMARKS.md): they come with the first page and with the
  // polls, not with each draw.
  const chips = { state: "", channel: "", counts: null };
  function buildChips() {
    const box = document.getElementById("chips");
    box.setAttribute("aria-label", t("chips"));
    const add = (kind, value, label) => {
      const b = document.createElement("button");
      b.type = "button"; b.className = "chip"; b.dataset.kind = kind; b.dataset.value = value; b.dataset.label = label;
      b.setAttribute("aria-pressed", "false");
      b.textContent = label;
      b.addEventListener("click", () => {
        chips[kind] = chips[kind] === value ? "" : value;
        showChips();
        table.ajax.reload();
      });
      box.appendChild(b);
    };
    add("state", "error", t("chip.errors"));
    add("state", "off", t("chip.off"));
    add("state", "due", t("chip.due"));
    const ch = cols.find((c) => c.role === "task_type" && c.type === "enum");
    for (const o of (ch && ch.options) || []) add("channel", o, tOr("ch." + o, o));
  }
  function showChips() {
    const c = chips.counts;
    for (const b of document.querySelectorAll("#chips .chip")) {
      const on = chips[b.dataset.kind] === b.dataset.value;
      b.setAttribute("aria-pressed", on ? "true" : "false");
      b.classList.toggle("on", on);
      let n = null;
      if (c) n = b.dataset.kind === "channel" ? (c.channels || {})[b.dataset.value] : c[{ error: "errors", off: "off", due: "due" }[b.dataset.value]];
      b.textContent = n == null ? b.dataset.label : t("chip.count", { label: b.dataset.label, n: n });
      if (b.dataset.value === "error") b.classList.toggle("bad", !!n);
    }
  }
  function takeCounts(body) {
    if (!body || !body.counts) return;
    chips.counts = body.counts;
    showChips();
  }

  async function getJSON(url, opts) {
    const res = await fetch(url, opts);
    let body = {};
    try { body = await res.json(); } catch (e) { body = {}; }
    if (!res.ok && !body.error) body.error = res.status + " " + res.statusText;
    if (!res.ok) { body.errorEN = body.error; body.error = window.cronsheetErrorText(lang, body); }
    return { ok: res.ok, status: res.status, body: body };
  }

  // ---- refresh: the page, then polls of it ----------------------------------
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
    let body = {};
    try { body = await res.json(); } catch (e) { body = {}; }
    if (!res.ok && !body.error) body.error = res.status + " " + res.statusText;
    if (!res.ok) { body.errorEN = body.error; body.error = window.cronsheetErrorText(lang, body); }
    out.body = body;
    return out;
  }
  // pace sets the next poll's delay from an answer's server time.
  function pace(ms) {
    pollDelay = ms > slowMS ? Math.min(maxPollMS, pollDelay * 2) : pollMS;
    schedulePoll();
  }
  function schedulePoll() {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(tick, document.hidden ? hiddenPollMS : pollDelay);
  }
  let polls = 0;
  async function tick() {
    polls++;
    refreshTimes();
    try { await poll(); } finally { schedulePoll(); }
  }

  // A reload that poll started must not redraw under an edit or a delete
  // confirmation opened while it was in flight: its draw waits for them to
  // close (settle).
  let pollReload = false, pendingDraw = null;
  async function fetchPage(d, callback) {
    const fromPoll = pollReload;
    pollReload = false;
    const q = tableQuery(d);
    lastQuery = q;
    if (allMatches && matchKey(q) !== allMatches.key) setTimeout(clearSelection, 0);
    const asked = new URLSearchParams(q);
    if (!chips.counts) asked.set("counts", "1");
    const r = await getTable(asked, "");
    const body = r.body.error ? { draw: d.draw, recordsTotal: 0, recordsFiltered: 0, data: [] } : r.body;
    if (r.body.error) notice(r.body.error, true);
    // The polls ask with the counts: a tag of an answer without them
    // never matches theirs.
    else if (lastQuery === q) pageTag = asked.has("counts") ? r.tag : "";
    takeCounts(r.body);
    pace(r.ms);
    if (fromPoll && (editing || confirming.size)) { pendingDraw = () => callback(body); return; }
    callback(body);
  }
  function settle() {
    if (editing || confirming.size || !pendingDraw) return;
    const draw = pendingDraw;
    pendingDraw = null;
    draw();
  }

  // poll refreshes the rows on the page in place; a row with an open edit
  // is left alone, and the page is only reloaded (same page, same order)
  // when its set of rows changed and nobody is editing. The answer's tag
  // is kept only once the page shows all of it: a row left alone (being
  // edited, or on its way to the server) is asked for again next time.
  async function poll() {
    if (!lastQuery) return;
    const q = lastQuery;
    const asked = new URLSearchParams(q);
    asked.set("counts", "1");
    const r = await getTable(asked, pageTag);
    pace(r.ms);
    if (!r.ok || q !== lastQuery) return; // refused, or the page moved meanwhile
    if (r.status === 304) { answers.unchanged++; return; }
    answers.full++;
    takeCounts(r.body);
    const ids = table.rows({ page: "current" }).ids().toArray();
    const fresh = r.body.data.map((x) => x.id);
    const info = table.page.info();
    const same = ids.length === fresh.length && ids.every((id, i) => id === fresh[i]) &&
      info.recordsTotal === r.body.recordsTotal && info.recordsDisplay === r.body.recordsFiltered;
    if (!same) {
      if (!editing && confirming.size === 0 && !pendingDraw) { pollReload = true; table.ajax.reload(null, false); }
      return;
    }
    let all = true;
    for (const data of r.body.data) {
      if ((editing && editing.id === data.id) || busy.has(data.id)) { all = false; continue; }
      const row = table.row((i, d) => d.id === data.id);
      if (JSON.stringify(row.data()) !== JSON.stringify(data)) row.data(data);
    }
    if (all && !pendingDraw) pageTag = r.tag;
  }
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && table) { clearTimeout(pollTimer); tick(); } else if (table) schedulePoll();
  });

  // ---- columns: order and visibility ---------------------------------------
  // Columns can be dragged by their header to another place (ColReorder)
  // and shown or hidden (the Columns list); both are kept in localStorage
  // per scenario, by the columns' data keys, so a changed column model
  // drops a stale order instead of misplacing columns. cols keeps the
  // server's order: toOrig and toCur translate a column's index on screen
  // (DataTables' current index) to its index in cols and back.
  const layoutKey = "cronsheet.columns." + scenario;
  let layoutKeys = []; // every column's key, in cols order, then the page's own columns
  function toOrig(i) { return table && table.colReorder ? table.colReorder.transpose(i, "toOriginal") : i; }
  function toCur(i) { return table && table.colReorder ? table.colReorder.transpose(i, "fromOriginal") : i; }
  // shownCols are the indexes in cols of the data columns shown, in their
  // order on screen.
  function shownCols() {
    return table.columns(":visible").indexes().toArray().sort((a, b) => a - b).map(toOrig).filter((i) => i < cols.length);
  }
  function loadLayout() {
    let s = null;
    try { s = JSON.parse(localStorage.getItem(layoutKey) || "null"); } catch (e) { s = null; }
    const hidden = s && Array.isArray(s.hidden) ? s.hidden.filter((k) => layoutKeys.includes(k)) : [];
    const fits = s && Array.isArray(s.order) && s.order.length === layoutKeys.length && layoutKeys.every((k) => s.order.includes(k));
    return { order: fits ? s.order.map((k) => layoutKeys.indexOf(k)) : null, hidden: hidden };
  }
  function saveLayout() {
    const order = table.colReorder.order().map((i) => layoutKeys[i]);
    const hidden = cols.filter((c, i) => !table.column(toCur(i)).visible()).map((c) => c.data);
    localStorage.setItem(layoutKey, JSON.stringify({ order: order, hidden: hidden }));
  }
  function buildColumnList(hidden) {
    const list = document.getElementById("colvis-list");
    list.setAttribute("aria-label", t("cols.list"));
    cols.forEach((c, i) => {
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox"; box.checked = !hidden.includes(c.data); box.dataset.col = String(i);
      box.addEventListener("change", () => { table.column(toCur(i)).visible(box.checked); saveLayout(); });
      label.append(box, " " + c.title);
      list.appendChild(label);
    });
    document.getElementById("colvis-reset").addEventListener("click", () => {
      table.columns().visible(true);
      table.colReorder.reset();
      for (const box of list.querySelectorAll("input")) box.checked = true;
      localStorage.removeItem(layoutKey);
    });
  }

  // floatingHeader fixes what FixedHeader leaves to assistive technology
  // while its header floats: the floating copy holds the real header (its
  // sort buttons and the select-all box), yet it is marked aria-hidden;
  // the stand-in left in the table is not. So the floating header is
  // exposed and the stand-in is hidden and taken out of the tab order.
  function floatingHeader() {
    const floating = document.querySelector("table.fixedHeader-floating");
    if (!floating) return;
    floating.removeAttribute("aria-hidden");
    const standIn = document.querySelector("#rows > thead");
    if (!standIn) return;
    standIn.setAttribute("aria-hidden", "true");
    for (const el of standIn.querySelectorAll("[tabindex], input, button")) el.setAttribute("tabindex", "-1");
  }

  // ---- editing -------------------------------------------------------------
  function rowOf(td) { return table.row(td.closest("tr")); }
  // taskIDOf is the task id of the row holding el: its id field, else its id.
  function taskIDOf(el) { return taskIDOfRow(rowOf(el.closest("td")).data()); }
  function taskIDOfRow(row) {
    if (row.task && row.task.task_id) return row.task.task_id;
    const idField = cols.find((c) => c.type === "id");
    return String((idField && row.fields && row.fields[idField.field]) || row.id);
  }
  function colOf(td) { return cols[toOrig(table.cell(td).index().column)]; }

  function cellError(td, msg) {
    let el = td.querySelector(".cell-error");
    if (!el) { el = document.createElement("span"); el.className = "cell-error"; el.setAttribute("role", "alert"); td.appendChild(el); }
    el.textContent = msg || "";
  }

  // preview asks for a schedule's next fires, read in zone (a "tz" in the
  // text wins; none: the scenario's).
  async function preview(text, zone) {
    const q = new URLSearchParams({ when: text, n: "3", scenario: scenario });
    if (zone) q.set("tz", zone);
    return getJSON("/api/v1/schedule/preview?" + q);
  }

  let previewTimer = null;
  function showPreview(ed) {
    clearTimeout(previewTimer);
    previewTimer = setTimeout(async () => {
      const text = ed.input.value.trim();
      if (!text) { ed.preview.textContent = ""; return; }
      const row = rowOf(ed.td).data();
      const zone = zoneOfText(text) || rowZone(row);
      const r = await preview(text, zone);
      if (editing !== ed || ed.input.value.trim() !== text) return;
      if (r.body.error) { ed.preview.textContent = ""; cellError(ed.td, r.body.error); return; }
      cellError(ed.td, "");
      ed.preview.textContent = "→ " + r.body.canonical + "\n" + t("next") +
        r.body.fires.map((f) => inZone(f, zoneOfText(r.body.canonical) || zone)).join(" · ");
    }, 250);
  }

  function openEdit(td) {
    const col = colOf(td);
    if (!col || !col.editable || col.type === "switch") return;
    if (editing && editing.td === td) return;
    if (editing) cancelEdit();
    focusCell(td);
    const row = rowOf(td).data();
    const cur = row.fields ? row.fields[col.field] : undefined;
    let input;
    if (col.type === "enum") {
      input = document.createElement("select");
      for (const o of [""].concat(col.options || [])) {
        const opt = document.createElement("option");
        opt.value = o; opt.textContent = o;
        input.appendChild(opt);
      }
    } else {
      input = document.createElement("input");
      input.type = "text";
    }
    input.value = cur == null ? "" : String(cur);
    input.className = "cell-input";
    input.setAttribute("aria-label", ofRow(col.title, row));
    const ed = { id: row.id, col: col, td: td, input: input, preview: document.createElement("span") };
    ed.preview.className = "preview";
    td.classList.add("editing");
    td.replaceChildren(input);
    if (col.type === "schedule") {
      td.appendChild(ed.preview);
      input.addEventListener("input", () => showPreview(ed));
      showPreview(ed);
    }
    input.addEventListener("keydown", (e) => {
      // An input method (Chinese, Japanese …) takes Enter to pick its
      // candidate: that Enter is the IME's, not a save.
      if (e.isComposing || e.keyCode === 229) return;
      if (e.key === "Enter") { e.preventDefault(); save(ed, "down"); }
      else if (e.key === "Escape") { e.preventDefault(); cancelEdit(); backToCell(ed.td); }
      else if (e.key === "Tab") { e.preventDefault(); save(ed, e.shiftKey ? -1 : 1); }
    });
    editing = ed;
    input.focus();
    if (input.select) input.select();
  }

  function closeEdit(ed) {
    if (editing === ed) editing = null;
    ed.td.classList.remove("editing");
    setTimeout(settle, 0);
  }

  function cancelEdit() {
    const ed = editing;
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
    const value = ed.input.value;
    const cur = row.fields ? row.fields[ed.col.field] : undefined;
    if (value === (cur == null ? "" : String(cur))) {
      closeEdit(ed);
      rowOf(ed.td).invalidate("data");
      moveOn(ed, move);
      return;
    }
    if (ed.col.type === "schedule" && value.trim() !== "") {
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

  // ---- paste and undo: batches of cells ------------------------------------
  // A paste of tab-separated text (from a spreadsheet) fills the range
  // that starts at the focused cell, and is saved as one batch (POST
  // …/rows/batch): every row valid, all are saved; one refused, none is,
  // and each refused cell shows why. Undo (Ctrl+Z, or the Undo button)
  // takes back the page's own last edit or paste by saving the old values
  // again through the same endpoint, each row on the version its edit
  // saved (passed on by the undos since), so an undo never overwrites
  // someone else's later edit and the audit trail records it. A refused
  // undo is dropped, its reason shown.
  // [{rows: [{id, fields: {field: old value or null}, version: the row's version once edited}]}], newest last
  const undoStack = [];
  const maxUndo = 50;
  function remember(rows) {
    undoStack.push({ rows: rows });
    if (undoStack.length > maxUndo) undoStack.shift();
    document.getElementById("undo").disabled = false;
  }
  // parseTSV reads the clipboard's text as rows of cells: lines by CR/LF
  // (a last empty line dropped), cells by tab, a cell in double quotes
  // unquoted ("" is one quote).
  function parseTSV(text) {
    const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
    if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
    return lines.map((l) => l.split("\t").map((v) => /^".*"$/s.test(v) ? v.slice(1, -1).replace(/""/g, '"') : v));
  }
  // sendBatch POSTs edits ([{id, version, fields}]) and, saved, puts the
  // answered rows on the page; it returns the answer.
  async function sendBatch(edits) {
    const r = await getJSON(api + "/rows/batch", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rows: edits }),
    });
    if (r.ok) {
      for (const fresh of r.body.rows) {
        const row = table.row("#" + CSS.escape(fresh.id));
        if (row.any()) row.data(withTask(fresh, row.data()));
      }
    }
    return r;
  }
  // cellOf is the td of row id's field on this page, if shown.
  function cellOf(id, field) {
    const row = table.row("#" + CSS.escape(id));
    const i = cols.findIndex((c) => c.field === field);
    if (!row.any() || i < 0) return null;
    return table.cell(row.index(), toCur(i)).node();
  }
  // showRefusals writes each refused row's reason in its cell: the field's
  // when the answer names it, else the row's first pasted cell.
  function showRefusals(body, first) {
    for (const x of body.rows || []) {
      const td = cellOf(x.id, x.field) || cellOf(x.id, first[x.id]);
      if (td) cellError(td, x.error);
    }
    notice(body.error, true);
  }
  async function pasteAt(td, text) {
    const grid = parseTSV(text);
    const start = table.cell(td).index();
    const pageRows = table.rows({ page: "current" }).indexes().toArray();
    const at = pageRows.indexOf(start.row);
    if (at + grid.length > pageRows.length) { notice(t("paste.fit", { n: at + grid.length - pageRows.length }), true); return; }
    // The range's columns are the shown ones, in their order on screen.
    const shown = shownCols();
    const from = shown.indexOf(toOrig(start.column));
    const width = Math.max(...grid.map((l) => l.length));
    if (from < 0 || from + width > shown.length) { notice(t("paste.wide"), true); return; }
    const range = shown.slice(from, from + width).map((i) => cols[i]);
    for (const c of range) {
      if (!c.editable) { notice(t("paste.col", { col: c.title }), true); return; }
    }
    const edits = [], old = [], first = {};
    grid.forEach((line, i) => {
      const row = table.row(pageRows[at + i]).data();
      const fields = {}, was = {};
      line.forEach((v, j) => {
        const c = range[j];
        fields[c.field] = v === "" ? null : v;
        const cur = row.fields ? row.fields[c.field] : undefined;
        was[c.field] = cur === undefined ? null : cur;
      });
      first[row.id] = range[0].field;
      edits.push({ id: row.id, version: row.version, fields: fields });
      old.push({ id: row.id, fields: was });
    });
    applyBatch(edits, old, first, t("paste.done", { n: grid.reduce((n, l) => n + l.length, 0) }));
  }
  // applyBatch saves edits as one batch; saved, old (the values before)
  // is what Undo restores and done is the notice; refused, each row's
  // reason is shown in its cell (the field's, else first[id]'s).
  async function applyBatch(edits, old, first, done) {
    for (const e of edits) busy.add(e.id);
    const r = await sendBatch(edits);
    for (const e of edits) busy.delete(e.id);
    if (!r.ok) { showRefusals(r.body, first); return; }
    const saved = new Map(r.body.rows.map((x) => [x.id, x.version]));
    remember(old.map((x) => Object.assign({}, x, { version: saved.get(x.id) || 0 })));
    notice(done);
  }
  // onAutoFill saves what AutoFill's drag handle filled (its "autoFill"
  // event; AutoFill itself changes nothing, update: false) as one batch,
  // as a paste is: fill down copies the first cell's value into the cells
  // dragged over.
  function onAutoFill(e, dt, cells) {
    const edits = [], old = [], first = {};
    let n = 0;
    for (const line of cells) {
      const row = table.row(line[0].index.row).data();
      const fields = {}, was = {};
      for (const c of line) {
        const col = cols[toOrig(c.index.column)];
        if (!col || !col.editable || col.type === "switch") continue;
        const cur = row.fields ? row.fields[col.field] : undefined;
        const v = c.set == null ? "" : String(c.set);
        if (v === (cur == null ? "" : String(cur))) continue;
        fields[col.field] = v === "" ? null : v;
        was[col.field] = cur === undefined ? null : cur;
        if (!first[row.id]) first[row.id] = col.field;
        n++;
      }
      if (Object.keys(fields).length) {
        edits.push({ id: row.id, version: row.version, fields: fields });
        old.push({ id: row.id, fields: was });
      }
    }
    if (edits.length) applyBatch(edits, old, first, t("fill.done", { n: n }));
  }
  function onPaste(e) {
    const text = e.clipboardData ? e.clipboardData.getData("text/plain") : "";
    if (!text) return;
    let td = null;
    if (editing && e.target === editing.input) {
      // One value pastes into the editor; a range replaces the edit.
      if (!/[\t\n]/.test(text.replace(/\r?\n$/, ""))) return;
      td = editing.td;
      cancelEdit();
    } else if (e.target.closest && e.target.closest("input, select, textarea, [contenteditable]")) {
      return;
    } else {
      const cell = table.cell({ focused: true });
      if (!cell.any()) return;
      td = cell.node();
    }
    e.preventDefault();
    pasteAt(td, text);
  }
  async function undo() {
    const last = undoStack.pop();
    document.getElementById("undo").disabled = undoStack.length === 0;
    if (!last) { notice(t("undo.none")); return; }
    const edits = last.rows.map((x) => ({ id: x.id, version: x.version, fields: x.fields }));
    const r = await sendBatch(edits);
    if (!r.ok) { showRefusals(r.body, {}); return; }
    // The row is now as the newest earlier edit of it left it, at a new
    // version: that edit's undo is based on this one.
    for (const fresh of r.body.rows) {
      const earlier = undoStack.findLast((u) => u.rows.some((x) => x.id === fresh.id));
      if (earlier) for (const x of earlier.rows) if (x.id === fresh.id) x.version = fresh.version;
    }
    notice(t("undo.done", { n: last.rows.reduce((n, x) => n + Object.keys(x.fields).length, 0) }));
  }

  // moveOn goes where a save sends the keyboard (see save).
  function moveOn(ed, move) {
    if (move === "down") { backToCell(ed.td); table.keys.move("down"); return; }
    if (move) openNext(ed, move);
    else backToCell(ed.td);
  }

  // ---- keyboard: KeyTable's focused cell ----------------------------------
  // One cell of the table has the keyboard (KeyTable, class "focus"): the
  // arrows, Tab, Home/End and Page Up/Down move it; Enter or F2 edits it
  // (Enter switches a row on or off in the active column); Esc leaves the
  // table. The table itself takes the browser's focus (tabindex 0), so Tab
  // reaches it and a closed editor gives the focus back to it.
  function focusCell(td) {
    if (table.keys.enabled() && !td.classList.contains("focus")) table.cell(td).focus();
  }
  function backToCell(td) {
    if (td.isConnected) focusCell(td);
    document.getElementById("rows").focus({ preventScroll: true });
  }
  function onCellKey(e, dt, code, cell, orig) {
    if (editing || orig.isComposing || code === 229) return;
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
  function onTableFocus(e) {
    const el = document.getElementById("rows");
    if (e.target !== el || !el.matches(":focus-visible") || table.cell({ focused: true }).any()) return;
    const first = shownCols().find((i) => cols[i].editable && cols[i].type !== "switch");
    if (first === undefined) return;
    const cell = table.cell(":eq(0)", toCur(first), { page: "current" });
    if (cell.any()) cell.focus();
  }

  function openNext(ed, move) {
    const editable = shownCols().filter((i) => cols[i].editable && cols[i].type !== "switch");
    const at = editable.indexOf(cols.indexOf(ed.col));
    const next = editable[at + move];
    if (next === undefined) return;
    const node = table.cell(ed.td.closest("tr"), toCur(next)).node();
    if (node) openEdit(node);
  }

  // withTask is a row the rows API answered, with the task the page had
  // for it (the rows API does not send it; the next poll refreshes it).
  function withTask(fresh, old) {
    if (old && old.task && !fresh.task) fresh.task = old.task;
    return fresh;
  }

  async function toggleActive(input) {
    const td = input.closest("td");
    const row = rowOf(td).data();
    const col = colOf(td);
    const patch = {};
    patch[col.field] = input.checked ? 1 : 0;
    busy.add(row.id);
    const r = await getJSON(api + "/rows/" + encodeURIComponent(row.id), {
      method: "PATCH",
      headers: { "Content-Type": "application/json", "If-Match": '"' + row.version + '"' },
      body: JSON.stringify(patch),
    });
    busy.delete(row.id);
    if (!r.ok) { input.checked = !input.checked; cellError(td, r.body.error); return; }
    rowOf(td).data(withTask(r.body, row));
  }

  // Deleting asks first: the row's action cell shows Yes/No (rendered from
  // confirming, so a refresh of the row keeps the question on screen).
  function askDelete(btn) {
    const row = rowOf(btn.closest("td")).data();
    confirming.add(row.id);
    rowOf(btn.closest("td")).invalidate("data");
  }
  function answerDelete(btn, yes) {
    const td = btn.closest("td");
    const row = rowOf(td).data();
    if (!yes) {
      confirming.delete(row.id);
      rowOf(td).invalidate("data");
      settle();
      return;
    }
    btn.disabled = true;
    getJSON(api + "/rows/" + encodeURIComponent(row.id), { method: "DELETE" }).then((r) => {
      confirming.delete(row.id);
      if (r.ok || r.status === 404) { unselect(row.id); showBulk(); }
      if (!r.ok && r.status !== 404) { rowOf(td).invalidate("data"); cellError(td, r.body.error); settle(); return; }
      pendingDraw = null; // the reload below supersedes it
      notice(t("deleted", { id: row.id }));
      table.ajax.reload(null, false);
    });
  }

  // exportURL is the CSV of the current view (search, order, columns).
  function exportURL() {
    const q = new URLSearchParams(lastQuery);
    q.delete("start"); q.delete("length"); q.delete("draw");
    return api + "/table.csv?" + q;
  }

  // ---- selection and bulk actions ---------------------------------------------
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
  let allMatches = null; // {key, query} while every match is selected
  function selection() {
    const c = table ? table.select.cumulative() : null;
    if (!c) return { all: false, ids: [] };
    return { all: c.mode === "subtractive", ids: c.rows };
  }
  function isSelected(id) {
    const s = selection();
    return s.all ? !s.ids.includes(id) : s.ids.includes(id);
  }
  function selectedCount() {
    const s = selection();
    return s.all ? Math.max(0, table.page.info().recordsDisplay - s.ids.length) : s.ids.length;
  }
  // matchKey is what a "select all matches" selection is of: the search
  // and the filters of a table query, not its page or order.
  function matchKey(q) {
    const k = new URLSearchParams(q);
    for (const p of ["draw", "start", "length", "counts"]) k.delete(p);
    for (const p of Array.from(k.keys())) if (p.startsWith("order[")) k.delete(p);
    return k.toString();
  }
  function showBulk() {
    const n = table ? selectedCount() : 0;
    const box = document.getElementById("bulk");
    box.hidden = n === 0;
    document.getElementById("bulk-count").textContent = t(allMatches ? "bulk.count.all" : "bulk.count", { n: n });
    if (n === 0) document.getElementById("bulk-confirm").hidden = true;
    const info = table ? table.page.info() : { recordsDisplay: 0 };
    const pageIDs = table ? table.rows({ page: "current" }).ids().toArray() : [];
    const pageAll = pageIDs.length > 0 && pageIDs.every(isSelected);
    const more = document.getElementById("select-matches");
    more.hidden = !!allMatches || !pageAll || info.recordsDisplay <= pageIDs.length || info.recordsDisplay > maxAllMatches;
    more.textContent = t("select.matches", { n: info.recordsDisplay });
    const all = document.getElementById("select-all");
    if (all) all.checked = pageAll;
    for (const el of document.querySelectorAll("#rows tbody input.sel-row")) {
      const id = el.closest("tr").id;
      el.checked = isSelected(id);
    }
  }
  function selectPage(on) {
    const rows = table.rows({ page: "current" });
    if (on) rows.select(); else rows.deselect();
    showBulk();
  }
  function selectAllMatches() {
    allMatches = { key: matchKey(lastQuery), query: new URLSearchParams(lastQuery) };
    table.rows({ page: "current" }).select();
    table.select.cumulative("subtractive"); // redraws the page
    showBulk();
  }
  function clearSelection() {
    allMatches = null;
    table.select.cumulative("additive");
    table.rows().deselect();
    selection().ids.length = 0;
    showBulk();
  }
  // unselect drops id from the selection (a row deleted on its own).
  function unselect(id) {
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
    const q = new URLSearchParams(allMatches.query);
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
  async function bulk(action) {
    document.getElementById("bulk-confirm").hidden = true;
    for (const b of document.querySelectorAll("#bulk button")) b.disabled = true;
    const sum = { ok: 0, failed: 0, errors: [] };
    try {
      const ids = await bulkIDs();
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
    pendingDraw = null;
    table.ajax.reload(null, false);
  }

  // ---- import --------------------------------------------------------------
  async function importCSV(file) {
    const list = document.getElementById("import-errors");
    list.replaceChildren();
    list.hidden = true;
    const r = await getJSON(api + "/import", { method: "POST", headers: { "Content-Type": "text/csv" }, body: file });
    if (r.ok) {
      notice(t("imported", { n: r.body.imported }));
      table.ajax.reload(null, false);
      return;
    }
    notice(r.body.error, true);
    for (const e of r.body.lines || []) {
      const li = document.createElement("li");
      li.textContent = t("import.line", { line: e.line }) + (e.field ? " (" + e.field + ")" : "") + ": " + e.error;
      list.appendChild(li);
    }
    list.hidden = list.children.length === 0;
  }

  // ---- runs drawer ---------------------------------------------------------
  // Older runs come with the API's cursor (`next`); a server without run
  // queries pages by slot (`before`) instead.
  // Its instants are shown in the zone of the row whose runs they are.
  const drawer = { taskID: "", cursor: "", before: "", zone: "" };
  function zoneOfTask(taskID) {
    const row = table && table.rows().data().toArray().find((x) => taskIDOfRow(x) === taskID);
    return row ? zoneOf(row) : scenarioZone;
  }
  async function showRuns(taskID, more) {
    if (!more) {
      Object.assign(drawer, { taskID: taskID, cursor: "", before: "", zone: zoneOfTask(taskID) });
      document.querySelector("#runs tbody").replaceChildren();
    }
    const q = new URLSearchParams({ task_id: drawer.taskID, limit: "20" });
    if (drawer.cursor) q.set("cursor", drawer.cursor);
    else if (drawer.before) q.set("before", drawer.before);
    const r = await getJSON("/api/v1/runs?" + q);
    const box = document.getElementById("drawer");
    panel.open(box, document.getElementById("drawer-close"));
    document.getElementById("drawer-task").textContent = drawer.taskID;
    document.getElementById("drawer-all").href = "/runs?" + new URLSearchParams({ task_id: drawer.taskID });
    if (!r.ok) { notice(r.body.error, true); return; }
    const tb = document.querySelector("#runs tbody");
    const cell = (tr, v) => { const td = document.createElement("td"); td.textContent = v == null ? "" : String(v); tr.appendChild(td); return td; };
    const when = (tr, iso) => {
      const td = cell(tr, iso ? inZone(iso, drawer.zone) : "");
      if (iso) { td.title = iso; td.className = "run-time"; }
    };
    for (const run of r.body.runs) {
      const tr = document.createElement("tr");
      tr.className = "run-" + run.state;
      when(tr, run.slot); cell(tr, run.trigger_type); cell(tr, run.state); cell(tr, run.attempt);
      when(tr, run.fired_at); when(tr, run.finished_at); cell(tr, run.error); cell(tr, run.output);
      const link = document.createElement("a");
      link.href = "/runs?" + new URLSearchParams({ task_id: run.task_id, trigger_id: run.trigger_id });
      link.textContent = run.target || "→";
      link.className = "run-link";
      const td = document.createElement("td"); td.appendChild(link); tr.appendChild(td);
      tb.appendChild(tr);
    }
    if (!more && r.body.runs.length === 0) {
      const tr = document.createElement("tr"); cell(tr, t("runs.none")); tb.appendChild(tr);
    }
    const last = r.body.runs[r.body.runs.length - 1];
    drawer.cursor = r.body.next || "";
    drawer.before = !drawer.cursor && last ? last.slot : "";
    document.getElementById("runs-older").hidden = !drawer.cursor && r.body.runs.length < 20;
  }

  // ---- run now -------------------------------------------------------------
  // The row's task fires once, now, optionally with one-off params; the
  // drawer then shows its runs. The answer has one run per target: all of
  // them rejected is a 409 with the reasons.
  async function runNow(button, taskID, params) {
    if (button) button.disabled = true;
    const opts = { method: "POST" };
    if (params) {
      opts.headers = { "Content-Type": "application/json" };
      opts.body = JSON.stringify({ params: params });
    }
    const r = await getJSON("/api/v1/tasks/" + encodeURIComponent(taskID) + "/trigger", opts);
    if (button) button.disabled = false;
    if (!r.ok) { notice(r.body.error, true); return r; }
    const runs = r.body.runs || [];
    const refused = runs.filter((x) => x.state === "rejected");
    let msg = t("run.ok", { id: taskID });
    if (refused.length) {
      msg += " " + t("run.rejected", { n: refused.length, total: runs.length,
        why: refused.map((x) => x.target + ": " + x.error).join("; ") });
    }
    notice(msg, false);
    showRuns(taskID, false);
    return r;
  }

  // ---- run now with params: a small key = value editor ---------------------
  const paramsBox = { taskID: "" };
  function paramLine(key, value) {
    const li = document.createElement("li");
    const k = document.createElement("input");
    k.className = "param-key"; k.placeholder = t("params.key"); k.setAttribute("aria-label", t("params.key")); k.value = key || "";
    const eq = document.createElement("span"); eq.textContent = " = ";
    const v = document.createElement("input");
    v.className = "param-value"; v.placeholder = t("params.value"); v.setAttribute("aria-label", t("params.value")); v.value = value || "";
    const rm = document.createElement("button");
    rm.type = "button"; rm.className = "param-remove"; rm.textContent = "✕"; rm.setAttribute("aria-label", t("params.remove"));
    rm.addEventListener("click", () => li.remove());
    li.append(k, eq, v, rm);
    document.getElementById("params-list").appendChild(li);
    return k;
  }
  function openParams(taskID) {
    paramsBox.taskID = taskID;
    document.getElementById("params-task").textContent = taskID;
    document.getElementById("params-error").textContent = "";
    document.getElementById("params-list").replaceChildren();
    const first = paramLine("", "");
    panel.open(document.getElementById("params"), first);
  }
  // readParams collects the editor's lines; a value without a key is an
  // error (returned as a string); empty lines are skipped.
  function readParams() {
    const out = {};
    let n = 0;
    for (const li of document.querySelectorAll("#params-list li")) {
      n++;
      const k = li.querySelector(".param-key").value.trim();
      const v = li.querySelector(".param-value").value;
      if (!k && !v) continue;
      if (!k) return t("params.nokey", { n: n });
      out[k] = v;
    }
    return out;
  }
  async function runWithParams(e) {
    e.preventDefault();
    const err = document.getElementById("params-error");
    err.textContent = "";
    const params = readParams();
    if (typeof params === "string") { err.textContent = params; return; }
    const r = await runNow(document.getElementById("params-run"), paramsBox.taskID, params);
    if (!r.ok) { err.textContent = r.body.error; return; }
    panel.close(document.getElementById("params"));
  }

  // ---- task states -----------------------------------------------------------
  // Each row comes with its task's state (row.task, from the same answer
  // as the page): the table sends no request per row to show it.
  function stateCell(data, type, row) {
    if (type !== "display") return "";
    const cur = row.task && row.task.state;
    let html = '<select class="task-state" aria-label="' + esc(ofRow(t("state"), row)) + '"' + (cur ? "" : " disabled") + ">";
    if (!cur) html += '<option value="">' + esc(t("state.unknown")) + "</option>";
    for (const s of ["running", "stopped", "closed"]) {
      html += '<option value="' + s + '"' + (s === cur ? " selected" : "") + ">" + esc(t("state." + s)) + "</option>";
    }
    return html + "</select>";
  }
  async function setTaskState(sel) {
    const td = sel.closest("td");
    const row = rowOf(td).data();
    const id = taskIDOfRow(row);
    const was = row.task && row.task.state;
    sel.disabled = true;
    busy.add(row.id);
    const r = await getJSON("/api/v1/tasks/" + encodeURIComponent(id) + "/state", {
      method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ state: sel.value }),
    });
    busy.delete(row.id);
    sel.disabled = false;
    if (!r.ok) { sel.value = was || ""; cellError(td, r.body.error); return; }
    const cur = rowOf(td).data();
    if (cur.task) cur.task = Object.assign({}, cur.task, { state: r.body.state });
    notice(t("state.ok", { id: id, state: t("state." + r.body.state) }));
    rowOf(td).invalidate("data");
  }

  // ---- adding --------------------------------------------------------------
  function buildAddForm() {
    const box = document.getElementById("add-fields");
    for (const c of cols) {
      if (!c.editable || c.type === "switch") continue;
      let input;
      if (c.type === "enum") {
        input = document.createElement("select");
        // The scenario's default is chosen first; without one, an empty
        // choice leaves the field out and the row takes the built-in
        // default.
        const def = defaults[c.field];
        const opts = (c.options || []).slice();
        if (def == null || !opts.includes(String(def))) opts.unshift("");
        for (const o of opts) {
          const opt = document.createElement("option");
          opt.value = o; opt.textContent = o === "" ? t("add.default") : tOr("ch." + o, o);
          input.appendChild(opt);
        }
        input.value = def == null || !opts.includes(String(def)) ? "" : String(def);
      } else {
        input = document.createElement("input");
        input.type = "text";
      }
      input.name = c.field;
      input.placeholder = c.title;
      input.setAttribute("aria-label", c.title);
      box.appendChild(input);
    }
    // The new row's zone is written in the form, from the browser (else
    // the scenario's), so its times are never read in a zone nobody saw.
    if (tzField) {
      const zones = [viewerZone, defaults[tzField], scenarioZone].filter((z, i, all) => validZone(z) && all.indexOf(z) === i);
      const list = document.createElement("datalist");
      list.id = "add-zones";
      for (const z of zones) { const o = document.createElement("option"); o.value = z; list.appendChild(o); }
      const input = document.createElement("input");
      input.type = "text"; input.name = tzField; input.className = "add-tz"; input.setAttribute("list", "add-zones");
      input.placeholder = t("add.tz"); input.setAttribute("aria-label", t("add.tz")); input.title = t("add.tz");
      input.value = input.dataset.default = zones[0] || "";
      box.append(input, list);
    }
    document.getElementById("add-row").addEventListener("submit", async (e) => {
      e.preventDefault();
      const err = document.getElementById("add-error");
      err.textContent = "";
      const body = {};
      for (const input of box.querySelectorAll("input, select")) {
        if (input.value.trim() !== "") body[input.name] = input.value;
      }
      const when = cols.find((c) => c.type === "schedule");
      if (when && body[when.field]) {
        const p = await preview(body[when.field]);
        if (p.body.error) { err.textContent = p.body.error; return; }
      }
      const r = await getJSON(api + "/rows", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
      if (!r.ok) { err.textContent = r.body.error; return; }
      for (const input of box.querySelectorAll("input")) input.value = input.dataset.default || "";
      notice(t("added", { id: r.body.id }));
      table.ajax.reload(null, false);
    });
  }

  // ---- scenarios -----------------------------------------------------------
  // The header's switcher lists the node's scenarios (the columns
  // answer's); choosing one loads its table (?scenario=, kept in
  // localStorage for the next visit). A node with one scenario shows none.
  function buildScenarios(names) {
    localStorage.setItem(scenarioKey, scenario);
    if (!params.get("scenario") && scenario !== "memos") {
      params.set("scenario", scenario);
      history.replaceState(null, "", "?" + params);
    }
    const sel = document.getElementById("scenario");
    if (names.length < 2) return;
    sel.setAttribute("aria-label", t("scenario"));
    sel.title = t("scenario");
    for (const name of names) {
      const o = document.createElement("option");
      o.value = name;
      o.textContent = tOr("scn." + name, name);
      sel.appendChild(o);
    }
    sel.value = scenario;
    sel.hidden = false;
    sel.addEventListener("change", () => {
      localStorage.setItem(scenarioKey, sel.value);
      params.set("scenario", sel.value);
      location.search = "?" + params;
    });
  }

  // ---- start -------------------------------------------------------------
  async function start() {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
    const sel = document.getElementById("lang");
    sel.value = lang;
    sel.addEventListener("change", () => { localStorage.setItem("cronsheet.lang", sel.value); location.reload(); });

    const r = await getJSON(api + "/columns");
    if (!r.ok && r.status === 404 && !params.get("scenario") && localStorage.getItem(scenarioKey)) {
      // The scenario chosen last is gone from the config: back to memos.
      localStorage.removeItem(scenarioKey);
      location.reload();
      return;
    }
    if (!r.ok) { notice(r.body.error, true); return; }
    cols = r.body.columns;
    buildScenarios(r.body.scenarios || []);
    // A column is titled by its label in the page's language (the
    // scenario's config), else by its role where the language has a word
    // for it (Chinese), else as the server titles it (the en label, else
    // the field's name).
    for (const c of cols) c.title = (c.labels && c.labels[lang]) || tOr("col." + c.role, c.title);
    searchMin = r.body.search_min || 3;
    searchMinCJK = r.body.search_min_cjk || searchMin;
    defaults = r.body.defaults || {};
    scenarioZone = validZone(r.body.tz) ? r.body.tz : "UTC";
    tzField = r.body.tz_field || "";
    buildAddForm();
    buildChips();
    const columns = cols.map((c) => ({
      data: c.data, title: c.title, orderable: c.orderable, searchable: c.searchable,
      defaultContent: "", render: renderer(c), type: "string",
      className: "dt-head-left dt-body-left kt" + (c.editable && c.type !== "switch" ? " editable" : ""),
    }));
    columns.push({
      data: null, title: esc(t("state")), orderable: false, searchable: false, defaultContent: "",
      className: "task-state-cell", render: stateCell,
    });
    columns.push({
      data: null, title: "", orderable: false, searchable: false, defaultContent: "",
      render: (data, type, row) => {
        if (type !== "display") return "";
        if (confirming.has(row.id)) {
          return "<span>" + esc(t("del.sure")) + '</span> <button type="button" class="del-yes">' + esc(t("yes")) +
            '</button> <button type="button" class="del-no">' + esc(t("no")) + "</button>";
        }
        // Run now is offered only when the row can fire; otherwise the
        // button says why (its title) instead of a refusal after the click.
        const st = rowState(row);
        const no = st.run ? "" : ' disabled title="' + esc(t("run.cannot", { why: st.why })) + '"';
        const named = (key) => ' aria-label="' + esc(ofRow(t(key), row)) + '"';
        return '<button type="button" class="run-now"' + named("run.now") + no + ">" + esc(t("run.now")) + "</button> " +
          '<button type="button" class="run-params"' + named("run.params") + (st.run ? ' title="' + esc(t("run.params.title")) + '"' : no) + ">" + esc(t("run.params")) + "</button> " +
          '<button type="button" class="runs"' + named("runs") + ">" + esc(t("runs")) + '</button> ' +
          '<button type="button" class="del"' + named("del") + ">" + esc(t("del")) + "</button>";
      },
    });
    columns.push({
      data: null, title: '<input type="checkbox" id="select-all" aria-label="' + esc(t("select.all")) + '">',
      orderable: false, searchable: false, defaultContent: "", className: "sel",
      render: (data, type, row) => type !== "display" ? "" :
        '<input type="checkbox" class="sel-row" aria-label="' + esc(ofRow(t("select"), row)) + '"' + (table && isSelected(row.id) ? " checked" : "") + ">",
    });
    layoutKeys = cols.map((c) => c.data).concat(["_state", "_actions", "_select"]);
    const layout = loadLayout();
    cols.forEach((c, i) => { if (layout.hidden.includes(c.data)) columns[i].visible = false; });
    buildColumnList(layout.hidden);
    // KeyTable hears every keydown of the document; what is typed into a
    // control (the cell editor, the search box, a form) stays the
    // control's. Registered before KeyTable, this runs first.
    document.addEventListener("keydown", (e) => {
      if (e.target.closest && e.target.closest("input, select, textarea, button, [contenteditable]")) e.stopImmediatePropagation();
    });
    table = new DataTable("#rows", {
      serverSide: true, processing: false, ajax: fetchPage, rowId: "id",
      // The keyboard moves over the data columns (not the buttons); copy
      // (Ctrl+C) copies the focused cell; paste is the page's own (one
      // validated batch, below). No hidden capture input: the table
      // itself is focusable.
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
      columns: columns, order: [[0, "asc"]], orderMulti: false,
      pageLength: 25, lengthMenu: [10, 25, 50, 100, 500], searchDelay: 300,
      // DataTables' own strings come from its i18n file (npm
      // datatables.net-plugins, copied by `make static`).
      // DataTables' sort labels are not in it: they are given here.
      language: lang === "zh" ? { url: "/assets/vendor/zh.json", aria: {
        orderable: t("dt.orderable"), orderableReverse: t("dt.orderableReverse"), orderableRemove: t("dt.orderableRemove"),
      } } : {},
      // DataTables 2 labels its paging in English whatever the language.
      initComplete: () => {
        for (const nav of document.querySelectorAll('nav[aria-label="pagination"]')) nav.setAttribute("aria-label", t("pagination"));
      },
    });
    const tableEl = document.getElementById("rows");
    tableEl.tabIndex = 0;
    tableEl.setAttribute("aria-label", t("table.keys"));
    tableEl.addEventListener("focus", onTableFocus);
    table.on("key", onCellKey);
    table.on("autoFill", onAutoFill);
    document.addEventListener("paste", onPaste);
    // Ctrl+Z (⌘Z) outside a control: a control's own undo stays its own
    // (the keydown guard above stops this listener for them).
    document.addEventListener("keydown", (e) => {
      if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === "z" && !editing) { e.preventDefault(); undo(); }
    });
    const undoButton = document.getElementById("undo");
    undoButton.title = t("undo.title");
    undoButton.addEventListener("click", undo);
    const tbody = document.querySelector("#rows tbody");
    tbody.addEventListener("click", (e) => {
      const target = e.target;
      if (target.matches("button.del")) { askDelete(target); return; }
      if (target.matches("button.del-yes, button.del-no")) { answerDelete(target, target.matches(".del-yes")); return; }
      if (target.matches("button.runs")) { showRuns(taskIDOf(target), false); return; }
      if (target.matches("button.run-now")) { runNow(target, taskIDOf(target)); return; }
      if (target.matches("button.run-params")) { openParams(taskIDOf(target)); return; }
      if (target.closest("td.editing") || target.matches("input.act-switch, button, select")) return;
      const td = target.closest("td.editable");
      if (td) openEdit(td);
    });
    tbody.addEventListener("change", (e) => {
      if (e.target.matches("input.act-switch")) toggleActive(e.target);
      if (e.target.matches("select.task-state")) setTaskState(e.target);
    });
    // The header exists only once DataTables has its language file (zh
    // loads it asynchronously): listen on the document, not the checkbox.
    document.addEventListener("change", (e) => { if (e.target.id === "select-all") selectPage(e.target.checked); });
    table.on("draw", showBulk);
    table.on("columns-reordered", saveLayout);
    table.on("fixedheader-mode", floatingHeader);
    // Select keeps its list of selected ids in a handler of the same
    // events, registered at its init (later than this one where the
    // language file loads first): the page reads the list after it.
    table.on("select deselect", (e, dt, type) => { if (type === "row") setTimeout(showBulk, 0); });
    document.getElementById("select-matches").addEventListener("click", selectAllMatches);
    document.getElementById("select-clear").addEventListener("click", clearSelection);
    document.getElementById("params-form").addEventListener("submit", runWithParams);
    document.getElementById("params-add").addEventListener("click", () => paramLine("", "").focus());
    document.getElementById("params-cancel").addEventListener("click", () => panel.close(document.getElementById("params")));
    document.getElementById("bulk-activate").addEventListener("click", () => bulk("activate"));
    document.getElementById("bulk-deactivate").addEventListener("click", () => bulk("deactivate"));
    document.getElementById("bulk-delete").addEventListener("click", () => {
      document.getElementById("bulk-sure").textContent = t("bulk.sure", { n: selectedCount() });
      document.getElementById("bulk-confirm").hidden = false;
    });
    document.getElementById("bulk-yes").addEventListener("click", () => bulk("delete"));
    document.getElementById("bulk-no").addEventListener("click", () => { document.getElementById("bulk-confirm").hidden = true; });
    const file = document.getElementById("import-file");
    document.getElementById("import-csv").addEventListener("click", () => file.click());
    file.addEventListener("change", () => {
      if (file.files.length) importCSV(file.files[0]);
      file.value = "";
    });
    document.getElementById("drawer-close").addEventListener("click", () => panel.close(document.getElementById("drawer")));
    document.getElementById("runs-older").addEventListener("click", () => showRuns(drawer.taskID, true));
    document.getElementById("export-csv").addEventListener("click", () => {
      if (lastQuery) location.href = exportURL();
    });
    schedulePoll();
    window.cronsheet = { table: table, polls: () => polls, answers: () => Object.assign({}, answers),
      pollDelay: () => (document.hidden ? hiddenPollMS : pollDelay), setSlowMS: (ms) => { slowMS = ms; }, editing: () => editing, exportURL: exportURL, importCSV: importCSV,
      selected: () => selection().all ? ["*"] : selection().ids.slice(), selectedCount: () => selectedCount(),
      taskState: (id) => { const r = table.rows().data().toArray().find((x) => taskIDOfRow(x) === id); return r && r.task ? r.task.state : undefined; } };
    document.body.dataset.ready = "1";
  }
  start();
})();
