// The words every page shows: the header's links, yes and no, times
// relative to now, a row's control's name and DataTables' paging. Each
// page's own words are in its dictionary (common.js, app/i18n.js);
// lib/core.js's translator looks a key up there first, then here.
export const words = {
  en: {
    "nav.table": "Table", "nav.targets": "Targets", "nav.flows": "Flows", "nav.runs": "Runs",
    "nav.jobs": "Jobs", "nav.outbox": "Outbox", "nav.status": "Status", "nav.audit": "Audit",
    "nav.users": "Users", "nav.api": "API", "yes": "Yes", "no": "No", "never": "—", "now": "now", "in": "in {d}",
    "ago": "{d} ago", "s": "{n} s", "m": "{n} min", "h": "{n} h", "d": "{n} d", "of.row": "{what}, row {row}",
    "pagination": "pagination",
  },
  zh: {
    "nav.table": "表格", "nav.targets": "目标", "nav.flows": "任务流", "nav.runs": "运行记录", "nav.jobs": "作业",
    "nav.outbox": "发件箱", "nav.status": "状态", "nav.audit": "审计", "nav.users": "用户", "nav.api": "API 文档", "yes": "是", "no": "否",
    "never": "—", "now": "现在", "in": "{d}后", "ago": "{d}前", "s": "{n} 秒", "m": "{n} 分钟", "h": "{n} 小时",
    "d": "{n} 天", "of.row": "{what}（行 {row}）", "pagination": "分页",
  },
};
