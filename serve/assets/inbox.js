import * as orch from "./util.js";

// The "Needs you" inbox, on every view: open questions, manual GOs and
// high or critical escalations across runs, answered (or acknowledged)
// from the page. The feed's stream brings it; after an action, and where
// there is no stream, it reads /api/inbox; a server without that (404)
// has the inbox derived from each live run's status.
let hasInbox = true;
const items = new Map(); // key -> {li}
let list = null;

async function load(runs) {
  if (hasInbox) {
    const res = await orch.get("api/inbox");
    if (res.ok && Array.isArray(res.data)) return res.data;
    if (res.status !== 404) return null;
    hasInbox = false;
  }
  // Derived: the runs that can wait for someone.
  const live = (runs || []).filter((r) => r.state === "running" || r.state === "paused" || r.open_questions > 0);
  const out = [];
  const all = await Promise.all(live.slice(0, 50).map((r) => orch.get("api/runs/" + encodeURIComponent(r.id))));
  all.forEach((res, k) => {
    if (!res.ok || !res.data) return;
    const run = live[k].id, st = res.data;
    for (const q of st.questions || []) {
      if ((q.state && q.state !== "open") || (q.to && q.to !== "person")) continue;
      out.push({ run: run, kind: "question", id: q.id, text: q.question, complexity: q.complexity, asker: q.agent, cue: q.cue });
    }
    for (const cue of st.waiting_for_go || []) {
      out.push({ run: run, kind: "go", id: cue, text: "cue " + cue + " waits for GO" });
    }
  });
  return out;
}

function item(it) {
  const msg = orch.el("p", { class: "msg" });
  const escalation = it.kind === "escalation";
  const meta = orch.el("div", { class: "meta" },
    orch.el("a", { href: "#/run/" + encodeURIComponent(it.run) }, it.run), " \u00b7 ",
    it.kind === "go" ? "manual GO" : escalation ? "escalation " + it.id : "question " + it.id,
    it.complexity ? [" \u00b7 ", orch.el("span", { class: "cx" }, it.complexity)] : null,
    it.severity ? [" \u00b7 ", orch.el("span", { class: "sev sev-" + String(it.severity).replace(/[^a-z]/g, "") }, it.severity)] : null,
    it.asker ? (escalation ? " \u00b7 from " : " \u00b7 asked by ") + it.asker + (it.cue ? " (" + it.cue + ")" : "") : null);
  let form;
  if (escalation) { // the agent goes on: the person only says they saw it
    form = orch.el("form", { class: "act" }, orch.el("button", { type: "submit", class: "ack" }, "Acknowledge"));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const res = await orch.post("api/runs/" + encodeURIComponent(it.run) + "/ack", { id: it.id });
      msg.textContent = res.ok ? orch.errorText(res) : "refused: " + orch.errorText(res);
      inbox.refresh();
    });
  } else if (it.kind === "go") {
    form = orch.el("form", { class: "act" }, orch.el("button", { type: "submit", class: "go" }, "GO " + it.id));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const res = await orch.post("api/runs/" + encodeURIComponent(it.run) + "/go", { cue: it.id });
      msg.textContent = res.ok ? orch.errorText(res) : "refused: " + orch.errorText(res);
      inbox.refresh();
    });
  } else {
    const input = orch.el("input", { type: "text", name: "answer", placeholder: "your answer", "aria-label": "answer to " + it.id, autocomplete: "off" });
    form = orch.el("form", { class: "act" }, input, orch.el("button", { type: "submit" }, "Answer"));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      if (!input.value.trim()) { msg.textContent = "the answer is empty"; return; }
      const res = await orch.post("api/runs/" + encodeURIComponent(it.run) + "/answer", { question: it.id, answer: input.value });
      msg.textContent = res.ok ? orch.errorText(res) : "refused: " + orch.errorText(res);
      if (res.ok) input.value = "";
      inbox.refresh();
    });
  }
  return orch.el("li", { class: "item k-" + (it.kind === "go" || escalation ? it.kind : "question"), "data-key": key(it) },
    meta, orch.el("p", { class: "text" }, it.text || ""), form, msg);
}
const key = (it) => it.run + "\u0000" + it.kind + "\u0000" + it.id;

// show keeps the items already shown (and what is being typed in them).
function show(data) {
  const box = document.getElementById("inbox");
  if (!list) {
    list = orch.el("ul");
    box.appendChild(orch.el("h2", null, "Needs you ", orch.el("span", { class: "count" })));
    box.appendChild(list);
  }
  const keep = new Set(data.map(key));
  items.forEach((v, k) => { if (!keep.has(k)) { v.li.remove(); items.delete(k); } });
  for (const it of data) {
    if (!items.has(key(it))) {
      const li = item(it);
      items.set(key(it), { li: li });
      list.appendChild(li);
    }
  }
  box.querySelector(".count").textContent = String(data.length);
  box.classList.toggle("empty", data.length === 0);
}

let lastRuns = [];
let busy = false, again = false;
async function refresh(runs) {
  if (runs) lastRuns = runs;
  if (busy) { again = true; return; }
  busy = true;
  try {
    const data = await load(lastRuns);
    if (data) show(data);
  } finally {
    busy = false;
    if (again) { again = false; refresh(); }
  }
}
// show is the inbox as the stream sent it.
export const inbox = { refresh: orch.debounce(refresh, 300), show: (data) => { if (Array.isArray(data)) show(data); } };
