// The live settings page: host rate limits, the callback allow and deny
// lists and the cc group limits (GET/PUT /api/v1/settings). Admins edit
// them; anyone else reads them with every control disabled. Values reach
// the page through form fields and textContent only.
(function () {
  "use strict";
  const ui = window.cronsheetUI;
  const t = ui.t;
  let version = 0;

  const lines = (s) => s.split("\n").map((l) => l.trim()).filter((l) => l !== "");

  // parsePairs reads "name number [number]" lines; a bad line throws the
  // field's message.
  function parsePairs(text, field, make) {
    const out = {};
    lines(text).forEach((l, i) => {
      const parts = l.split(/\s+/);
      const nums = parts.slice(1).map(Number);
      if (parts.length < 2 || nums.some((n) => !Number.isFinite(n))) {
        throw new Error(t("se.badline", { field: t(field), n: i + 1 }));
      }
      out[parts[0]] = make(nums);
    });
    return out;
  }

  function show(s) {
    const f = document.getElementById("settings-form");
    version = s.version;
    f.elements.host_rate.value = s.host_rate;
    f.elements.host_burst.value = s.host_burst;
    f.elements.hosts.value = Object.keys(s.hosts || {}).sort()
      .map((h) => h + " " + s.hosts[h].rate + " " + s.hosts[h].burst).join("\n");
    f.elements.allow.value = (s.allow || []).join("\n");
    f.elements.deny.value = (s.deny || []).join("\n");
    f.elements.cc_groups.value = Object.keys(s.cc_groups || {}).sort()
      .map((g) => g + " " + s.cc_groups[g]).join("\n");
    document.getElementById("version").textContent =
      t("se.version", { v: s.version, who: s.updated_by || "?", at: s.updated_at });
  }

  async function load() {
    const r = await ui.getJSON("/api/v1/settings");
    if (!r.ok) { ui.notice(ui.errorText(r.body), true); return; }
    show(r.body);
  }

  async function save(e) {
    e.preventDefault();
    const f = e.target;
    let body;
    try {
      body = {
        version: version,
        host_rate: Number(f.elements.host_rate.value || 0),
        host_burst: Number(f.elements.host_burst.value || 0),
        hosts: parsePairs(f.elements.hosts.value, "se.hosts", (n) => ({ rate: n[0], burst: n[1] || 0 })),
        allow: lines(f.elements.allow.value),
        deny: lines(f.elements.deny.value),
        cc_groups: parsePairs(f.elements.cc_groups.value, "se.groups", (n) => n[0]),
      };
    } catch (err) { ui.notice(err.message, true); return; }
    const r = await ui.getJSON("/api/v1/settings", { method: "PUT", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body) });
    if (!r.ok) { ui.notice(ui.errorText(r.body), true); return; }
    show(r.body);
    ui.notice(t("se.saved", { v: r.body.version }));
  }

  // readOnly disables every control for a principal that is not an admin.
  async function readOnly() {
    if (await ui.myRole() === "admin") return;
    for (const el of document.querySelectorAll("#settings-form input, #settings-form textarea, #settings-form button")) {
      el.disabled = true;
    }
    document.getElementById("readonly").hidden = false;
  }

  document.addEventListener("DOMContentLoaded", () => {
    ui.setup();
    document.getElementById("settings-form").addEventListener("submit", save);
    Promise.all([readOnly(), load()]).finally(() => { document.body.dataset.ready = "1"; });
  });
})();
