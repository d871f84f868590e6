// The words every page shows: the header's links, yes and no, times
// relative to now, a row's control's name, DataTables' paging and the
// Why? dialog (lib/explain.js). Each
// page's own words are in its dictionary (common.js, app/i18n.js);
// lib/core.js's translator looks a key up there first, then here.
export const words = {
  en: {
    "nav.table": "Table", "nav.targets": "Targets", "nav.flows": "Flows", "nav.runs": "Runs",
    "nav.jobs": "Jobs", "nav.outbox": "Outbox", "nav.status": "Status", "nav.audit": "Audit",
    "nav.users": "Users", "nav.settings": "Settings", "nav.api": "API", "yes": "Yes", "no": "No", "never": "—", "now": "now", "in": "in {d}",
    "ago": "{d} ago", "s": "{n} s", "m": "{n} min", "h": "{n} h", "d": "{n} d", "of.row": "{what}, row {row}",
    "pagination": "pagination",
    "why": "Why?", "why.hint": "Why did or didn't this fire, and will it?", "why.title": "Why? Task {id}", "why.close": "Close",
    "why.v.pass": "pass", "why.v.fail": "fail", "why.v.info": "note",
    "why.r.row": "row", "why.r.task_state": "task state", "why.r.window": "start/end window", "why.r.schedule": "schedule",
    "why.r.target": "target", "why.r.admission": "admission", "why.r.health": "health", "why.r.overlap": "overlap", "why.r.misfire": "misfire",
    "why.r.claim": "claim", "why.r.ledger": "ledger",
    "ro.note": "You can view; editing needs the {role} role.", "ro.role.editor": "editor", "ro.role.admin": "admin",
    "close": "Close",
    // run states (the ledger's values)
    "rn.s.pending": "pending", "rn.s.running": "running", "rn.s.accepted": "accepted", "rn.s.done": "done",
    "rn.s.failed": "failed", "rn.s.dead": "dead", "rn.s.rejected": "rejected", "rn.s.timeout": "timeout",
    "rn.s.cancelled": "cancelled", "rn.s.skipped": "skipped",
  },
  zh: {
    "nav.table": "表格", "nav.targets": "目标", "nav.flows": "任务流", "nav.runs": "运行记录", "nav.jobs": "作业",
    "nav.outbox": "发件箱", "nav.status": "状态", "nav.audit": "审计", "nav.users": "用户", "nav.settings": "设置", "nav.api": "API 文档", "yes": "是", "no": "否",
    "never": "—", "now": "现在", "in": "{d}后", "ago": "{d}前", "s": "{n} 秒", "m": "{n} 分钟", "h": "{n} 小时",
    "d": "{n} 天", "of.row": "{what}（行 {row}）", "pagination": "分页",
    "why": "为什么？", "why.hint": "它为什么触发或没有触发，之后会不会触发？", "why.title": "为什么？任务 {id}", "why.close": "关闭",
    "why.v.pass": "通过", "why.v.fail": "未通过", "why.v.info": "说明",
    "why.r.row": "行", "why.r.task_state": "任务状态", "why.r.window": "起止时间", "why.r.schedule": "日程",
    "why.r.target": "目标", "why.r.admission": "准入", "why.r.health": "健康", "why.r.overlap": "重叠", "why.r.misfire": "错过策略",
    "why.r.claim": "认领", "why.r.ledger": "账本",
    "ro.note": "你可以查看；编辑需要{role}角色。", "ro.role.editor": "编辑者", "ro.role.admin": "管理员",
    "close": "关闭",
    "rn.s.pending": "待执行", "rn.s.running": "运行中", "rn.s.accepted": "已接受", "rn.s.done": "已完成",
    "rn.s.failed": "失败", "rn.s.dead": "死信", "rn.s.rejected": "已拒绝", "rn.s.timeout": "超时",
    "rn.s.cancelled": "已取消", "rn.s.skipped": "已跳过",
  },
};
