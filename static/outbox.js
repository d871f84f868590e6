// The outbox page: the newest 100 messages the outbox recorded instead of
// sending, refreshed every 3 s, in the page's language. Values reach the
// page through textContent (or esc(), for the time) only.
(function () {
  "use strict";
  const ui = window.cronsheetUI;
  const t = ui.t;

  function cell(tr, text) {
    const td = document.createElement("td");
    td.textContent = text == null ? "" : String(text);
    tr.appendChild(td);
    return td;
  }
  // channel names a channel in the page's language (an unknown one as is).
  function channel(c) {
    const s = t("ob.ch." + c);
    return s === "ob.ch." + c ? c : s;
  }

  async function load() {
    let r;
    try {
      r = await ui.getJSON("/api/v1/outbox?limit=100");
    } catch (e) {
      ui.notice(t("st.unreachable", { error: e.message }), true);
      return;
    }
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    const tb = document.querySelector("#outbox tbody");
    tb.replaceChildren();
    const messages = r.body.messages || [];
    ui.notice(messages.length ? "" : t("ob.none"));
    for (const m of messages) {
      const tr = document.createElement("tr");
      tr.dataset.id = m.id;
      cell(tr, m.id);
      cell(tr, "").innerHTML = ui.timeHTML(m.created_at);
      const name = cell(tr, m.task_title || m.task_id); // the title, the id on hover
      name.className = "task-name"; name.title = m.task_id;
      const trig = cell(tr, "");
      if (m.trigger_id) {
        const a = document.createElement("a");
        a.href = "/runs?trigger_id=" + encodeURIComponent(m.trigger_id);
        a.textContent = m.trigger_id;
        trig.appendChild(a);
      }
      cell(tr, channel(m.channel));
      cell(tr, m.to); cell(tr, m.subject); cell(tr, m.body).className = "outbox-body";
      tb.appendChild(tr);
    }
  }

  document.addEventListener("DOMContentLoaded", async () => {
    ui.setup();
    await load();
    setInterval(load, 3000);
    document.body.dataset.ready = "1";
  });
})();
