// The "Why?" dialog: why a task did, did not, will or will not fire at a
// slot (GET /api/v1/tasks/:task_id/explain), as one sentence in the
// page's language and the list of checks behind it. The table page's rows
// and runs drawer and the Runs page open it. Values from the server reach
// the page through textContent only.
import { getJSON, lang, translator } from "./core.js";

const { t } = translator({});

// dialog returns the page's one explain dialog, made on first use.
function dialog() {
  let d = document.getElementById("explain");
  if (d) return d;
  d = document.createElement("dialog");
  d.id = "explain";
  d.setAttribute("aria-labelledby", "explain-title");
  const h = document.createElement("h2"); h.id = "explain-title";
  const p = document.createElement("p"); p.id = "explain-sentence"; p.setAttribute("role", "status");
  const ol = document.createElement("ol"); ol.id = "explain-checks";
  const close = document.createElement("button");
  close.type = "button"; close.id = "explain-close"; close.textContent = t("why.close");
  close.addEventListener("click", () => d.close());
  d.append(h, p, ol, close);
  document.body.appendChild(d);
  return d;
}

// checkLine is one check as a list item: its verdict, its rule, its
// detail in the page's language.
function checkLine(c) {
  const li = document.createElement("li");
  li.className = "check-" + c.verdict;
  const v = document.createElement("strong");
  v.textContent = t("why.v." + c.verdict);
  const rule = document.createElement("span");
  rule.className = "check-rule";
  rule.textContent = " " + t("why.r." + c.rule) + ": ";
  const detail = document.createElement("span");
  detail.textContent = lang === "zh" ? c.detail_zh : c.detail;
  li.append(v, rule, detail);
  return li;
}

// showExplain opens the dialog on taskID at the instant at (an RFC 3339
// string; "" asks about the task's next or latest missed slot).
export async function showExplain(taskID, at) {
  const d = dialog();
  document.getElementById("explain-title").textContent = t("why.title", { id: taskID });
  const sentence = document.getElementById("explain-sentence");
  const list = document.getElementById("explain-checks");
  sentence.textContent = "…";
  list.replaceChildren();
  if (!d.open) d.showModal();
  const q = at ? "?" + new URLSearchParams({ at: at }) : "";
  const r = await getJSON("/api/v1/tasks/" + encodeURIComponent(taskID) + "/explain" + q);
  if (!r.ok) { sentence.textContent = r.body.error; sentence.className = "error"; return; }
  sentence.className = "verdict-" + r.body.verdict;
  sentence.textContent = lang === "zh" ? r.body.sentence_zh : r.body.sentence;
  for (const c of r.body.checks || []) list.appendChild(checkLine(c));
}
