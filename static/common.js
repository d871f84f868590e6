// Shared by the pages but the table and the sign-in page: their words
// in English and Simplified Chinese, and window.cronsheetUI, which their
// own scripts read: the language and translator, fetch helpers, time
// display, DataTables helpers. Most of it is lib/core.js, which the table
// page's modules import themselves. Values from the server reach the
// page through esc() or textContent only. This is a module: a page loads
// its own script after it with type="module" too, so that script runs
// once window.cronsheetUI is set.
import {
  captureErrors, dtDone, dtLanguage, esc, errorText, exact, getJSON, lang, locale, notice, relative, setupLanguage, translator,
} from "./lib/core.js";
import { showExplain } from "./lib/explain.js";
import { lockPage, myRole } from "./lib/role.js";

captureErrors();

// dict holds the words of these pages; lib/words.js those every page shows.
const dict = {
  en: {
    // jobs
    "jb.states": "Job states", "jb.tab": "{label} ({n})", "jb.retry": "Retry", "jb.cancel": "Cancel",
    "jb.block": "Block", "jb.unblock": "Unblock", "jb.backfill": "Backfill all", "jb.export": "Export dead letters (JSON lines)",
    "jb.select.all": "select every job shown", "jb.select": "select job", "jb.id": "job", "jb.method": "method",
    "jb.name": "name", "jb.state": "state", "jb.attempts": "attempts", "jb.due": "due", "jb.created": "created",
    "jb.error": "error", "jb.more": "More jobs", "jb.none": "No jobs in this state.", "jb.selected": "{n} selected",
    "jb.done": "{action}: {ok} done, {failed} failed.",
    "rn.s.blocked": "blocked", "rn.s.backfilling": "backfilling",
    "refresh": "Refresh", "prev": "Previous", "next": "Next",
    // flows
    "fl.list": "Flows", "fl.new": "New flow", "fl.edit": "Edit flow", "fl.id": "id",
    "fl.start": "start step", "fl.max_depth": "max depth", "fl.description": "description",
    "fl.schedule": "schedule", "fl.tz": "time zone", "fl.state.idle": "idle", "fl.state.running": "running",
    "fl.step": "step", "fl.targets": "targets", "fl.result": "result", "fl.timeout": "timeout (s)",
    "fl.on.success": "on success", "fl.on.failure": "on failure", "fl.on.timeout": "on timeout",
    "fl.params": "params (k=v; …)", "fl.step.add": "Add step", "fl.step.remove": "Remove",
    "fl.step.of": "{field}, step {step}",
    "fl.save": "Save", "fl.trigger": "Trigger", "fl.delete": "Delete", "fl.delete.sure": "Delete this flow?",
    "fl.graph": "Graph", "fl.o.success": "success", "fl.o.failure": "failure", "fl.o.timeout": "timeout",
    "fl.executions": "Executions", "fl.x.id": "execution", "fl.x.state": "state", "fl.x.started": "started",
    "fl.x.steps": "steps", "fl.x.detail": "Execution", "fl.x.outcome": "outcome", "fl.x.runs": "runs",
    "fl.x.output": "output", "fl.x.result": "result", "fl.x.stop": "Stop", "fl.x.show": "Show",
    "fl.saved": "Flow {id} saved.", "fl.deleted": "Flow {id} deleted.", "fl.triggered": "Execution {id} started.",
    "fl.stopped": "Execution {id} stopped.", "fl.none": "No flows yet.", "fl.nox": "No executions yet.",
    "fl.x.running": "running", "fl.x.success": "success", "fl.x.failure": "failure", "fl.x.timeout": "timeout",
    "fl.x.interrupted": "interrupted",
    // targets
    "tg.new": "New target", "tg.edit": "Edit target", "tg.save": "Save", "tg.cancel": "Cancel",
    "tg.id": "id", "tg.name": "name", "tg.kind": "kind", "tg.state": "state",
    "tg.feedback_timeout": "feedback timeout (s)", "tg.version": "version", "tg.actions": "",
    "tg.headers": "headers (Name: value, one a line)", "tg.body": "body template", "tg.timeout": "timeout (s)",
    "tg.method": "method", "tg.url": "url", "tg.command": "command (listed in config)",
    "tg.topic": "topic", "tg.key": "key template", "tg.value": "value template",
    "tg.action": "action", "tg.tasks": "task ids (comma-separated)", "tg.flows": "flow ids (comma-separated)", "tg.keep_age": "keep age (s)", "tg.keep_count": "keep count",
    "tg.json": "Sent as", "tg.none": "no fields for this kind",
    "tg.created": "Target {id} created.", "tg.saved": "Target {id} saved.", "tg.deleted": "Target {id} deleted.",
    "tg.del": "Delete", "tg.del.sure": "Delete this target?", "tg.edit.btn": "Edit",
    "tg.st.preset": "preset", "tg.st.running": "running", "tg.st.paused": "paused",
    "tg.headers.bad": "line {n} is not Name: value",
    "tg.health": "health", "tg.h.none": "no deliveries yet", "tg.h.ok": "OK {ago}",
    "tg.h.fail1": "1 failure in a row, last: {error}", "tg.h.failn": "{n} failures in a row, last: {error}",
    "tg.h.probe": "probe: {what}", "tg.h.probe.none": "probe: not yet",
    "tg.probe.interval": "probe every (e.g. 1m; empty: no probe)", "tg.probe.method": "probe method",
    "tg.probe.path": "probe path (empty: the url)",
    // runs
    "rn.task": "task", "rn.title": "task title", "rn.taskid": "task id", "rn.target": "target", "rn.state": "state", "rn.any": "any state",
    "rn.filter": "Filter", "rn.clear": "Clear",
    "rn.fired": "fired", "rn.trigger": "trigger", "rn.attempt": "attempt", "rn.slot": "slot",
    "rn.finished": "finished", "rn.error": "error", "rn.id": "trigger id",
    "rn.detail": "Run", "rn.close": "close", "rn.feedback": "Feedback reports", "rn.nofeedback": "No feedback reports.",
    "rn.live": "Unfinished: read again every {s} s.",
    "rn.at": "at", "rn.status": "status", "rn.message": "message", "rn.output": "output", "rn.progress": "progress",
    "rn.final": "final", "rn.params": "params", "rn.deadline": "deadline", "rn.node": "node",
    // status
    "st.summary": "System", "st.node": "node", "st.store": "store", "st.ok": "ok", "st.down": "unavailable",
    "st.armed": "armed tasks", "st.pending": "pending jobs armed here", "st.next_due": "Next due", "st.job": "job", "st.due": "due",
    "st.running": "Running", "st.failed": "Failed (retrying)", "st.dead": "Dead",
    "st.queues": "Queues", "st.group": "group", "st.inflight": "in flight", "st.waiting": "waiting",
    "st.limit": "limit", "st.unlimited": "none", "st.host": "host",
    "st.errors": "Last errors", "st.at": "at", "st.task": "task", "st.trigger": "trigger", "st.state": "state",
    "st.error": "error", "st.none": "none", "st.job.title": "Job",
    "st.charts": "Fires over time", "st.window": "window", "st.fires": "fires", "st.failures": "failures",
    "st.lag": "lag p99 (ms)", "st.time": "time", "st.totals": "{fires} fires, {failures} failed, in the last {window}.",
    "st.truncated": "(the oldest runs were not all read)",
    "st.chart.fires": "Chart: fires and failures per interval", "st.chart.lag": "Chart: fire lag p99 per interval",
    "st.timeline": "Next 24 hours", "st.tl.none": "No fires in the next 24 hours.", "st.tl.more": "and {n} more",
    "st.tl.hour": "{n} fires", "st.tl.limit": "(the first {n} fires only)",
    // audit
    "au.kind": "kind", "au.any": "any", "au.rows": "rows of {s}", "au.id": "id", "au.what": "changed", "au.who": "who", "au.action": "action",
    "au.at": "at", "au.change": "change", "au.filter": "Filter", "au.clear": "Clear", "au.older": "Older records",
    "au.none": "No records.", "au.unset": "(not set)",
    // live settings
    "se.title": "Live settings", "se.about": "Every node applies these within a few seconds. The config file only seeds them on an empty store.",
    "se.readonly": "Only an admin can change the settings; you can read them.",
    "se.rates": "Host rate limits", "se.rate": "default rate (calls per second; 0: unlimited)", "se.burst": "default burst",
    "se.hosts": "per host (one a line: host rate burst)", "se.guard": "Callback hosts",
    "se.allow": "allow (one a line: CIDR, IP, host or .domain)", "se.deny": "deny (one a line)",
    "se.cc": "Job concurrency groups", "se.groups": "group limits (one a line: group limit)", "se.save": "Save settings",
    "se.version": "Version {v}, saved by {who} at {at}.", "se.saved": "Saved: version {v}. Every node applies it within a few seconds.",
    "se.badline": "{field}: line {n} is not a name followed by numbers",
    "au.k.@settings": "live settings",
    // users and tokens
    "us.users": "Users", "us.tokens": "API tokens", "us.name": "name", "us.role": "role", "us.password": "password",
    "us.haspw": "state", "us.disabled": "disabled", "us.created": "created", "us.add": "Add user", "us.delete": "Delete",
    "us.user": "user", "us.tname": "token name", "us.expires": "expires in (e.g. 720h; empty: never)",
    "us.expires_at": "expires", "us.create": "Create token", "us.revoke": "Revoke",
    "us.once": "Copy this token now; it is not shown again:",
    "au.k.@target": "targets", "au.k.@task": "task states and triggers", "au.k.@job": "jobs", "au.k.@run": "runs",
    "au.k.@user": "users", "au.k.@token": "tokens",
    "st.updated": "Updated {time}; refreshed every {s} s.", "st.unreachable": "The server cannot be reached: {error}",
    // outbox
    "api.about": "The REST API's reference, from its OpenAPI document (/api/v1/openapi.json). Client examples in Python, Node and Go are in the repository's examples/ folder.",
    "ob.about": "Messages of the email, SMS and outbox channels that were recorded rather than sent: the newest 100, refreshed every 3 s.",
    "ob.time": "time", "ob.task": "task", "ob.trigger": "trigger", "ob.channel": "channel", "ob.to": "to",
    "ob.subject": "subject", "ob.body": "body", "ob.none": "No messages yet.",
    "ob.ch.outbox": "outbox", "ob.ch.email": "email", "ob.ch.sms": "SMS",
    "us.id": "id", "us.r.viewer": "viewer", "us.r.editor": "editor", "us.r.admin": "admin",
    "fl.r.all": "all", "fl.r.any": "any", "fl.graph.label": "flow graph",
    "fl.start.none": "(none)",
    "fl.warn.to": "{target} is an {kind} target with no recipient: add to=address (or to={{params.to}}) to this step's params.",
    "fl.warn.paused": "{target} is paused: it refuses scheduled runs.",
    "fl.warn.preset": "{target} is preset: it accepts no run until it is set running.",
    "tg.k.email": "email", "tg.k.sms": "sms",
    "tg.a.cleanup_runs": "cleanup_runs", "tg.a.pause_task": "pause_task", "tg.a.resume_task": "resume_task",
    "tg.a.trigger_task": "trigger_task", "tg.a.start_flow": "start_flow", "tg.a.stop_flow": "stop_flow",
  },
  zh: {
    "jb.states": "作业状态", "jb.tab": "{label}（{n}）", "jb.retry": "重试", "jb.cancel": "取消",
    "jb.block": "阻止", "jb.unblock": "解除阻止", "jb.backfill": "全部回填", "jb.export": "导出死信（JSON 行）",
    "jb.select.all": "选择显示的所有作业", "jb.select": "选择作业", "jb.id": "作业", "jb.method": "方式",
    "jb.name": "名称", "jb.state": "状态", "jb.attempts": "尝试次数", "jb.due": "到期", "jb.created": "创建时间",
    "jb.error": "错误", "jb.more": "更多作业", "jb.none": "此状态下没有作业。", "jb.selected": "已选 {n} 个",
    "jb.done": "{action}：成功 {ok}，失败 {failed}。",
    "rn.s.blocked": "已阻止", "rn.s.backfilling": "回填中",
    "refresh": "刷新", "prev": "上一页", "next": "下一页",
    "fl.list": "任务流", "fl.new": "新任务流", "fl.edit": "编辑任务流", "fl.id": "ID",
    "fl.start": "起始步骤", "fl.max_depth": "最大深度", "fl.description": "描述",
    "fl.schedule": "调度", "fl.tz": "时区", "fl.state.idle": "空闲", "fl.state.running": "运行中",
    "fl.step": "步骤", "fl.targets": "目标", "fl.result": "结果模式", "fl.timeout": "超时（秒）",
    "fl.on.success": "成功时", "fl.on.failure": "失败时", "fl.on.timeout": "超时时",
    "fl.params": "参数（k=v; …）", "fl.step.add": "添加步骤", "fl.step.remove": "移除",
    "fl.step.of": "{field}（步骤 {step}）",
    "fl.save": "保存", "fl.trigger": "触发", "fl.delete": "删除", "fl.delete.sure": "删除这个任务流？",
    "fl.graph": "流程图", "fl.o.success": "成功", "fl.o.failure": "失败", "fl.o.timeout": "超时",
    "fl.executions": "执行记录", "fl.x.id": "执行", "fl.x.state": "状态", "fl.x.started": "开始时间",
    "fl.x.steps": "步骤", "fl.x.detail": "执行", "fl.x.outcome": "结果", "fl.x.runs": "运行",
    "fl.x.output": "输出", "fl.x.result": "执行结果", "fl.x.stop": "停止", "fl.x.show": "查看",
    "fl.saved": "已保存任务流 {id}。", "fl.deleted": "已删除任务流 {id}。", "fl.triggered": "已开始执行 {id}。",
    "fl.stopped": "已停止执行 {id}。", "fl.none": "还没有任务流。", "fl.nox": "还没有执行记录。",
    "fl.x.running": "运行中", "fl.x.success": "成功", "fl.x.failure": "失败", "fl.x.timeout": "超时",
    "fl.x.interrupted": "已中断",
    "tg.new": "新目标", "tg.edit": "编辑目标", "tg.save": "保存", "tg.cancel": "取消",
    "tg.id": "ID", "tg.name": "名称", "tg.kind": "类型", "tg.state": "状态",
    "tg.feedback_timeout": "反馈超时（秒）", "tg.version": "版本", "tg.actions": "",
    "tg.headers": "请求头（每行 名称: 值）", "tg.body": "请求体模板", "tg.timeout": "超时（秒）",
    "tg.method": "方法", "tg.url": "URL", "tg.command": "命令（配置中列出的）",
    "tg.topic": "主题", "tg.key": "键模板", "tg.value": "值模板",
    "tg.action": "动作", "tg.tasks": "任务 ID（逗号分隔）", "tg.flows": "任务流 ID（逗号分隔）", "tg.keep_age": "保留时长（秒）", "tg.keep_count": "保留条数",
    "tg.json": "将发送", "tg.none": "此类型没有其他字段",
    "tg.created": "已创建目标 {id}。", "tg.saved": "已保存目标 {id}。", "tg.deleted": "已删除目标 {id}。",
    "tg.del": "删除", "tg.del.sure": "删除这个目标？", "tg.edit.btn": "编辑",
    "tg.st.preset": "预置", "tg.st.running": "运行", "tg.st.paused": "暂停",
    "tg.headers.bad": "第 {n} 行不是 名称: 值",
    "tg.health": "健康", "tg.h.none": "尚无投递", "tg.h.ok": "正常（{ago}）",
    "tg.h.fail1": "连续失败 1 次，最近：{error}", "tg.h.failn": "连续失败 {n} 次，最近：{error}",
    "tg.h.probe": "探测：{what}", "tg.h.probe.none": "探测：尚未进行",
    "tg.probe.interval": "探测间隔（如 1m；留空：不探测）", "tg.probe.method": "探测方法",
    "tg.probe.path": "探测路径（留空：即 URL）",
    "rn.task": "任务", "rn.title": "任务标题", "rn.taskid": "任务编号", "rn.target": "目标", "rn.state": "状态", "rn.any": "全部状态",
    "rn.filter": "筛选", "rn.clear": "清除",
    "rn.fired": "触发时间", "rn.trigger": "触发方式", "rn.attempt": "尝试", "rn.slot": "计划时间",
    "rn.finished": "结束时间", "rn.error": "错误", "rn.id": "触发 ID",
    "rn.detail": "运行", "rn.close": "关闭", "rn.feedback": "反馈报告", "rn.nofeedback": "没有反馈报告。",
    "rn.live": "尚未结束：每 {s} 秒自动刷新。",
    "rn.at": "时间", "rn.status": "状态码", "rn.message": "消息", "rn.output": "输出", "rn.progress": "进度",
    "rn.final": "最终", "rn.params": "参数", "rn.deadline": "截止时间", "rn.node": "节点",
    "st.summary": "系统", "st.node": "节点", "st.store": "存储", "st.ok": "正常", "st.down": "不可用",
    "st.armed": "已装载任务", "st.pending": "本节点已装载的待执行作业", "st.next_due": "即将到期", "st.job": "作业", "st.due": "到期",
    "st.running": "运行中", "st.failed": "失败（重试中）", "st.dead": "死信",
    "st.queues": "队列", "st.group": "并发组", "st.inflight": "执行中", "st.waiting": "等待中",
    "st.limit": "上限", "st.unlimited": "无", "st.host": "主机",
    "st.errors": "最近错误", "st.at": "时间", "st.task": "任务", "st.trigger": "触发 ID", "st.state": "状态",
    "st.error": "错误", "st.none": "无", "st.job.title": "作业",
    "st.charts": "触发趋势", "st.window": "时间范围", "st.fires": "触发", "st.failures": "失败",
    "st.lag": "延迟 p99（毫秒）", "st.time": "时间", "st.totals": "最近 {window} 内触发 {fires} 次，失败 {failures} 次。",
    "st.truncated": "（较早的运行记录未全部读取）",
    "st.chart.fires": "图表：每个时段的触发与失败次数", "st.chart.lag": "图表：每个时段的触发延迟 p99",
    "st.timeline": "未来 24 小时", "st.tl.none": "未来 24 小时内没有触发。", "st.tl.more": "另有 {n} 个",
    "st.tl.hour": "{n} 次触发", "st.tl.limit": "（仅显示前 {n} 次触发）",
    "au.kind": "类别", "au.any": "全部", "au.rows": "{s} 的行", "au.id": "ID", "au.what": "对象", "au.who": "操作人", "au.action": "操作",
    "au.at": "时间", "au.change": "变更", "au.filter": "筛选", "au.clear": "清除", "au.older": "更早的记录",
    "au.none": "没有记录。", "au.unset": "（未设置）",
    // live settings
    "se.title": "实时设置", "se.about": "每个节点在几秒内应用这些设置。配置文件只在存储为空时提供初始值。",
    "se.readonly": "只有管理员可以修改设置；你可以查看。",
    "se.rates": "主机速率限制", "se.rate": "默认速率（每秒调用次数；0：不限）", "se.burst": "默认突发量",
    "se.hosts": "按主机（每行一项：主机 速率 突发量）", "se.guard": "回调主机",
    "se.allow": "允许（每行一项：CIDR、IP、主机名或 .域名）", "se.deny": "拒绝（每行一项）",
    "se.cc": "作业并发组", "se.groups": "组上限（每行一项：组名 上限）", "se.save": "保存设置",
    "se.version": "版本 {v}，由 {who} 于 {at} 保存。", "se.saved": "已保存：版本 {v}。每个节点会在几秒内应用。",
    "se.badline": "{field}：第 {n} 行不是“名称 数字”的格式",
    "au.k.@settings": "实时设置",
    "us.users": "用户", "us.tokens": "API 令牌", "us.name": "用户名", "us.role": "角色", "us.password": "密码",
    "us.haspw": "状态", "us.disabled": "已停用", "us.created": "创建时间", "us.add": "添加用户", "us.delete": "删除",
    "us.user": "用户", "us.tname": "令牌名称", "us.expires": "有效期（如 720h；留空：永久）",
    "us.expires_at": "到期", "us.create": "创建令牌", "us.revoke": "吊销",
    "us.once": "请立即复制此令牌，它不会再次显示：",
    "au.k.@target": "目标", "au.k.@task": "任务状态与触发", "au.k.@job": "作业", "au.k.@run": "运行",
    "au.k.@user": "用户", "au.k.@token": "令牌",
    "st.updated": "更新于 {time}，每 {s} 秒刷新。", "st.unreachable": "无法连接服务器：{error}",
    "api.about": "REST API 参考，来自其 OpenAPI 文档（/api/v1/openapi.json）。Python、Node 和 Go 的客户端示例在代码仓库的 examples/ 目录中。",
    "ob.about": "邮件、短信和发件箱渠道记录下来而未实际发送的消息：最新 100 条，每 3 秒刷新。",
    "ob.time": "时间", "ob.task": "任务", "ob.trigger": "触发 ID", "ob.channel": "渠道", "ob.to": "收件人",
    "ob.subject": "主题", "ob.body": "正文", "ob.none": "还没有消息。",
    "ob.ch.outbox": "发件箱", "ob.ch.email": "邮件", "ob.ch.sms": "短信",
    "us.id": "ID", "us.r.viewer": "查看者", "us.r.editor": "编辑者", "us.r.admin": "管理员",
    "fl.r.all": "全部成功", "fl.r.any": "任一成功", "fl.graph.label": "任务流图",
    "fl.start.none": "（无）",
    "fl.warn.to": "{target} 是{kind}目标，没有收件人：请在本步骤的参数中加上 to=地址（或 to={{params.to}}）。",
    "fl.warn.paused": "{target} 已暂停：它拒绝按计划的运行。",
    "fl.warn.preset": "{target} 处于预设状态：设为运行中之前不接受任何运行。",
    "tg.k.email": "邮件", "tg.k.sms": "短信",
    "tg.a.cleanup_runs": "清理运行记录", "tg.a.pause_task": "暂停任务", "tg.a.resume_task": "恢复任务",
    "tg.a.trigger_task": "触发任务", "tg.a.start_flow": "启动任务流", "tg.a.stop_flow": "停止任务流",
  },
};

const { t, tOr } = translator(dict);

// timeHTML shows an instant relative to now, the exact one on hover.
// Each is a time.rel-time, rewritten by tickTimes.
function timeHTML(iso) {
  if (!iso) return esc(t("never"));
  return '<time class="rel-time" datetime="' + esc(iso) + '" title="' + esc(exact(iso)) + '">' + esc(relative(t, iso)) + "</time>";
}

// tickTimes rewrites every relative time timeHTML wrote, so "3 min ago"
// stays true on a page left open: every 30 s (?tick=ms sets it, for
// tests).
function tickTimes() {
  const ms = Math.max(250, Number(new URLSearchParams(location.search).get("tick")) || 30000);
  setInterval(() => {
    for (const el of document.querySelectorAll("time.rel-time[datetime]")) el.textContent = relative(t, el.getAttribute("datetime"));
  }, ms);
}

// cursorPaging adapts a keyset-paged list to DataTables' server-side
// mode: only Previous and Next move, so each page's cursor is the one the
// page before it answered. fetchPage(cursor, limit) resolves to
// {ok, error, data, next}. reset() forgets the cursors (new filters).
function cursorPaging(fetchPage) {
  let cursors = { 0: "" }, length = 0;
  const ajax = async function (d, callback) {
    if (d.length !== length) { cursors = { 0: "" }; length = d.length; }
    const cursor = cursors[d.start] === undefined ? "" : cursors[d.start];
    const r = await fetchPage(cursor, d.length);
    if (!r.ok) {
      notice(r.error, true);
      callback({ draw: d.draw, recordsTotal: 0, recordsFiltered: 0, data: [] });
      return;
    }
    if (r.next) cursors[d.start + d.length] = r.next;
    const total = d.start + r.data.length + (r.next ? 1 : 0);
    callback({ draw: d.draw, recordsTotal: total, recordsFiltered: total, data: r.data });
  };
  return { ajax: ajax, reset: () => { cursors = { 0: "" }; } };
}

window.cronsheetUI = {
  explain: showExplain, // the Why? dialog (lib/explain.js)
  lang: lang, t: t, esc: esc, getJSON: getJSON, errorText: errorText, notice: notice, timeHTML: timeHTML,
  // setup translates the page's data-i18n elements, wires the language
  // switch and starts the relative times' tick.
  setup: () => { setupLanguage(t); tickTimes(); },
  // locale is the page's language for dates and times (toLocaleString).
  locale: locale,
  cursorPaging: cursorPaging, dtLanguage: dtLanguage, dtDone: () => dtDone(t),
  // stateName is a run state in the page's language (an unknown one as is).
  stateName: (s) => tOr("rn.s." + s, s),
  // ago is how long ago the instant iso was, in words.
  ago: (iso) => relative(t, iso),
  // myRole resolves to the signed-in role; lockPage(need, {disable, hide})
  // makes the page read-only below the role need (lib/role.js).
  myRole: myRole,
  lockPage: (need, sel) => lockPage(t, need, sel),
};
