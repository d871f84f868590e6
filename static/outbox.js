// The outbox page: the newest 100 messages, refreshed every 3 s; text
// only (no HTML).
"use strict";
function cell(tr, text) { const td = document.createElement("td"); td.textContent = text == null ? "" : String(text); tr.appendChild(td); }
async function load() {
  const res = await fetch("/api/v1/outbox?limit=100");
  if (!res.ok) return;
  const body = await res.json();
  const tb = document.querySelector("#outbox tbody");
  tb.replaceChildren();
  for (const m of body.messages) {
    const tr = document.createElement("tr");
    cell(tr, m.id); cell(tr, m.created_at); cell(tr, m.task_id); cell(tr, m.channel);
    cell(tr, m.to); cell(tr, m.subject); cell(tr, m.body);
    tb.appendChild(tr);
  }
}
load(); setInterval(load, 3000);
