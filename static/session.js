// Shared by every page but the sign-in page: asks the server who is signed
// in and shows it in the header with a sign-out button, or, in auth mode
// local_dev, a banner saying that every local request acts as an admin.
// It also gives each page its title and the language switch its label in
// the chosen language (the sign-in page does both itself).
(function () {
  "use strict";

  const dict = {
    en: {
      "signed": "Signed in as {user} ({role})",
      "logout": "Sign out",
      "localdev": "auth: local_dev — this loopback server signs everyone in as a local admin. Use auth: required on a shared machine.",
      "lang": "Language",
    },
    zh: {
      "signed": "已登录：{user}（{role}）",
      "logout": "退出登录",
      "localdev": "auth: local_dev —— 此仅限本机的服务把所有请求视为本地管理员。共享的机器上请使用 auth: required。",
      "lang": "语言",
      // Page titles by path (English ones are in the pages).
      "title./": "cronsheet · 表格", "title./targets": "cronsheet · 目标", "title./flows": "cronsheet · 任务流",
      "title./runs": "cronsheet · 运行记录", "title./jobs": "cronsheet · 作业", "title./outbox": "cronsheet · 发件箱", "title./status": "cronsheet · 状态",
      "title./audit": "cronsheet · 审计", "title./users": "cronsheet · 用户与令牌",
      "title./settings": "cronsheet · 设置",
      "title./api/docs": "cronsheet · API 文档",
    },
  };
  const lang = localStorage.getItem("cronsheet.lang") ||
    ((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en");
  function t(key, vars) {
    let s = (dict[lang] && dict[lang][key]) || dict.en[key] || key;
    for (const k in vars || {}) s = s.replace("{" + k + "}", vars[k]);
    return s;
  }

  // translateFrame titles the page and labels the language switch.
  function translateFrame() {
    const title = dict[lang] && dict[lang]["title." + location.pathname];
    if (title) document.title = title;
    const sel = document.getElementById("lang");
    if (sel) sel.setAttribute("aria-label", t("lang"));
  }

  async function show() {
    translateFrame();
    const res = await fetch("/api/v1/me");
    if (res.status === 401) { location.assign("/login?next=" + encodeURIComponent(location.pathname)); return; }
    if (!res.ok) return;
    const me = await res.json();
    // Users is an admin's page: other roles are not offered its link.
    if (me.role !== "admin") {
      for (const a of document.querySelectorAll('nav a[href="/users"]')) a.hidden = true;
    }
    const header = document.querySelector("header");
    if (!header) return;
    const bar = document.createElement("div");
    bar.id = "auth-bar";
    if (me.local_dev && me.via === "local_dev") {
      bar.className = "banner";
      bar.textContent = t("localdev");
      header.after(bar);
      return;
    }
    const who = document.createElement("span");
    who.id = "auth-user";
    who.textContent = t("signed", { user: me.user, role: me.role });
    bar.appendChild(who);
    if (me.via === "session") {
      const btn = document.createElement("button");
      btn.type = "button";
      btn.id = "logout";
      btn.textContent = t("logout");
      btn.addEventListener("click", async () => {
        await fetch("/api/v1/logout", { method: "POST" });
        location.assign("/login");
      });
      bar.appendChild(btn);
    }
    header.appendChild(bar);
  }
  // Slide-over panels close with Escape, giving the focus back to where it
  // was before the panel took it (window.cronsheetPanel.open(el, focus,
  // onClose): onClose runs however the panel closes).
  const panels = [];
  function openPanel(el, focus, onClose) {
    const was = el.hidden;
    el.hidden = false;
    if (!was) return;
    panels.push({ el: el, back: document.activeElement, onClose: onClose });
    const target = focus || el.querySelector("button, input, select, textarea, a[href]");
    if (target) target.focus();
  }
  function closePanel(el) {
    el.hidden = true;
    const i = panels.findIndex((p) => p.el === el);
    if (i < 0) return;
    const p = panels.splice(i, 1)[0];
    if (p.onClose) p.onClose();
    if (p.back && p.back.isConnected && typeof p.back.focus === "function") p.back.focus();
  }
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !panels.length) return;
    const top = panels[panels.length - 1];
    if (top.el.contains(document.activeElement) || document.activeElement === document.body) closePanel(top.el);
  });
  window.cronsheetPanel = { open: openPanel, close: closePanel };

  document.addEventListener("DOMContentLoaded", show);
})();
