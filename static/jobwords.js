// The jobs page's own words (its search, confirmations, a job's detail)
// in English and Simplified Chinese, over the shared ones (common.js,
// lib/words.js): jobT(key, vars) is common's t for keys it knows and
// this file's for the rest (jd.*).
import { translator } from "./lib/core.js";

const dict = {
  en: {
    "jd.search": "Search", "jd.search.hint": "name, callback or key", "jd.search.go": "Search",
    "jd.search.clear": "Clear search", "jd.nomatch": "No job in this state matches “{q}”.",
    "jd.sure.cancel": "Cancel the selected jobs ({n})? They will not run.", "jd.sure.block": "Block the selected jobs ({n})? They will not run until unblocked.",
    "jd.sure.backfill": "Re-run every {state} job (up to 1000)?",
    "jd.sure.one.cancel": "Cancel this job? It will not run.", "jd.sure.one.block": "Block this job? It will not run until unblocked.",
    "jd.sure.one.retry": "Run this job again now?",
    "jd.title": "Job", "jd.open": "open job {id}", "jd.close": "close", "jd.payload": "Payload", "jd.schedule": "Schedule",
    "jd.events": "State history", "jd.runs": "Runs", "jd.result": "Result", "jd.actions": "Actions",
    "jd.id": "id", "jd.method": "method", "jd.name": "name or callback", "jd.params": "params",
    "jd.headers": "headers (values are write-only)", "jd.key": "key", "jd.cc": "concurrency group",
    "jd.cclimit": "group limit", "jd.due": "due at", "jd.cron": "cron", "jd.next": "next fire",
    "jd.retries": "max retries", "jd.ttl": "time to live (s)", "jd.state": "state", "jd.attempts": "attempts",
    "jd.created": "created", "jd.replaced": "replaced by", "jd.error": "error", "jd.noresult": "No result yet.",
    "jd.at": "at", "jd.reason": "reason", "jd.trigger": "trigger id", "jd.attempt": "attempt", "jd.noevents": "No transitions yet.",
    "jd.fired": "fired", "jd.finished": "finished", "jd.output": "output", "jd.noruns": "No runs yet.",
    "jd.run.open": "open run {id}", "jd.done": "{action}: done.",
    "jd.s.pending": "pending", "jd.s.blocked": "blocked", "jd.s.running": "running", "jd.s.backfilling": "backfilling",
    "jd.s.failed": "failed", "jd.s.done": "done", "jd.s.dead": "dead", "jd.s.cancelled": "cancelled",
    "jd.s.submitted": "submitted", "jd.s.closed": "closed", "jd.s.replaced": "replaced",
  },
  zh: {
    "jd.search": "搜索", "jd.search.hint": "名称、回调地址或键", "jd.search.go": "搜索",
    "jd.search.clear": "清除搜索", "jd.nomatch": "此状态下没有与“{q}”匹配的作业。",
    "jd.sure.cancel": "取消 {n} 个作业？它们将不会运行。", "jd.sure.block": "阻止 {n} 个作业？解除阻止前它们不会运行。",
    "jd.sure.backfill": "重新运行所有{state}作业（最多 1000 个）？",
    "jd.sure.one.cancel": "取消此作业？它将不会运行。", "jd.sure.one.block": "阻止此作业？解除阻止前它不会运行。",
    "jd.sure.one.retry": "立即重新运行此作业？",
    "jd.title": "作业", "jd.open": "打开作业 {id}", "jd.close": "关闭", "jd.payload": "请求内容", "jd.schedule": "计划",
    "jd.events": "状态历史", "jd.runs": "运行记录", "jd.result": "结果", "jd.actions": "操作",
    "jd.id": "ID", "jd.method": "方式", "jd.name": "名称或回调地址", "jd.params": "参数",
    "jd.headers": "请求头（值只可写入）", "jd.key": "键", "jd.cc": "并发组",
    "jd.cclimit": "组上限", "jd.due": "到期时间", "jd.cron": "周期", "jd.next": "下次触发",
    "jd.retries": "最多重试", "jd.ttl": "有效期（秒）", "jd.state": "状态", "jd.attempts": "尝试次数",
    "jd.created": "创建时间", "jd.replaced": "被替换为", "jd.error": "错误", "jd.noresult": "尚无结果。",
    "jd.at": "时间", "jd.reason": "原因", "jd.trigger": "触发 ID", "jd.attempt": "尝试", "jd.noevents": "尚无状态变化。",
    "jd.fired": "触发时间", "jd.finished": "结束时间", "jd.output": "输出", "jd.noruns": "尚无运行记录。",
    "jd.run.open": "打开运行 {id}", "jd.done": "{action}：已完成。",
    "jd.s.pending": "待执行", "jd.s.blocked": "已阻止", "jd.s.running": "运行中", "jd.s.backfilling": "回填中",
    "jd.s.failed": "失败", "jd.s.done": "已完成", "jd.s.dead": "死信", "jd.s.cancelled": "已取消",
    "jd.s.submitted": "已提交", "jd.s.closed": "已关闭", "jd.s.replaced": "已替换",
  },
};

const own = translator(dict);

// jobT is key's text in the page's language: this file's words for jd.*
// keys, common.js's (window.cronsheetUI.t) for the rest.
export function jobT(key, vars) {
  return key.startsWith("jd.") ? own.t(key, vars) : window.cronsheetUI.t(key, vars);
}

// jobStateName is a job state (or a transition's state) in the page's
// language; an unknown one as is.
export function jobStateName(s) { return own.tOr("jd.s." + s, s); }

// translateJobWords sets the text of the page's data-i18n elements whose
// key is a jd.* key, and the aria-label and placeholder of those with
// data-i18n-aria and data-i18n-ph jd.* keys.
export function translateJobWords() {
  for (const el of document.querySelectorAll("[data-i18n^='jd.']")) el.textContent = jobT(el.dataset.i18n);
  for (const el of document.querySelectorAll("[data-i18n-aria^='jd.']")) el.setAttribute("aria-label", jobT(el.dataset.i18nAria));
  for (const el of document.querySelectorAll("[data-i18n-ph^='jd.']")) el.setAttribute("placeholder", jobT(el.dataset.i18nPh));
}
