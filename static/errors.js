// Server errors in the page's language. The server writes English, with
// a stable code (task.Code) and the field at fault; another language puts
// its sentence for the code first (the field named) and keeps the
// server's detail after it, which is not translated. Loaded by every page
// before its own script: window.cronsheetErrorText(lang, body) is the
// text to show for an error answer's body.
(function () {
  "use strict";
  const heads = {
    zh: {
      invalid_field: "字段「{field}」有误", invalid_request: "请求有误", unauthorized: "请先登录",
      forbidden: "没有权限执行此操作", not_found: "未找到", method_not_allowed: "不支持此操作",
      conflict: "当前状态不允许此操作", already_exists: "ID 或键已被占用", version_conflict: "已被他人修改，请刷新后重试",
      already_ran: "作业已运行", already_cancelled: "作业已取消或已被替换", job_running: "作业正在运行，请结束后再试",
      body_too_large: "提交的内容过大", unsupported_media_type: "请以 JSON 格式提交", wrong_host: "主机名与本服务器不符",
      rate_limited: "请求过于频繁，请稍后再试", internal: "服务器内部错误，原因见服务器日志", not_implemented: "此服务器不支持该功能",
      unavailable: "服务暂不可用，请稍后再试", timeout: "服务器处理超时", client_error: "请求被拒绝",
    },
  };
  const sep = { zh: "：" };

  window.cronsheetErrorText = function (lang, body) {
    const msg = body.error || "";
    const head = (heads[lang] || {})[body.code];
    if (!head) return msg;
    const text = head.replace("{field}", body.field || "");
    if (body.code === "internal" || !msg) return text;
    return text + sep[lang] + msg;
  };
})();
