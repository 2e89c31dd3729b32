import * as orch from "./util.js";
import { EvAttemptEnded, EvBlackboard, EvCueState } from "./events.js";

// The panel of one cue: its attempts (with reasons), outputs, the tail of
// its log (live), the run's blackboard (versions, authors) and the tree of
// tasks it handed off or spawned.
const TAIL = 200, PAGE = 1000, MAX_VALUE = 4000;

const json = (v) => {
  const s = typeof v === "string" ? v : JSON.stringify(v, null, 2);
  return s.length > MAX_VALUE ? s.slice(0, MAX_VALUE) + "\n\u2026 (" + s.length + " characters)" : s;
};
const section = (name, body) => orch.el("section", null, orch.el("h3", null, name), body);

function attempts(c) {
  if (!c.attempts || !c.attempts.length) return orch.el("p", { class: "muted" }, "No attempt yet.");
  return orch.el("ol", { class: "attempts" }, c.attempts.map((a) => orch.el("li", null,
    orch.el("div", null, "#" + a.number + " " + a.agent + " ", orch.stateBadge(a.state), " ", orch.took(a.started_at, a.ended_at),
      a.exit_code != null ? " \u00b7 exit " + a.exit_code : "", a.class ? " \u00b7 " + a.class : "", orch.cost(a) ? " \u00b7 " + orch.cost(a) : ""),
    a.reason ? orch.el("div", { class: "reason" }, a.reason) : null,
    a.tail && a.tail.length ? orch.el("pre", { class: "tail" }, a.tail.join("\n")) : null)));
}

// tasks is the tree of the cue's handoffs and spawns: the status's cues
// with a parent (and its "tasks" list, where a server gives one).
function tasks(st, root) {
  const kids = new Map();
  const addKid = (t) => {
    if (!t.parent) return;
    if (!kids.has(t.parent)) kids.set(t.parent, []);
    kids.get(t.parent).push(t);
  };
  (st.cues || []).forEach(addKid);
  (st.tasks || []).forEach((t) => { if (!(st.cues || []).some((c) => c.id === t.id)) addKid(t); });
  const tree = (id, depth) => {
    const list = kids.get(id);
    if (!list || depth > 50) return null;
    return orch.el("ul", { class: "tree" }, list.map((t) => orch.el("li", null,
      orch.el("span", null, t.id + " "), t.kind ? orch.el("span", { class: "muted" }, t.kind + " ") : null,
      (t.agents || []).length ? orch.el("span", { class: "muted" }, t.agents.join(", ") + " ") : null,
      orch.stateBadge(t.state), tree(t.id, depth + 1))));
  };
  return tree(root, 0) || orch.el("p", { class: "muted" }, "No handoff or spawn.");
}

export function cuePanel(box, runId, getStatus, onClose) {
  let cue = null, gen = 0, logAfter = 0, poller = null;
  const parts = {};
  const base = "api/runs/" + encodeURIComponent(runId);

  let logBusy = 0;
  async function loadLog(g) {
    if (logBusy === g) return; // one reader at a time, or lines come twice
    logBusy = g;
    try { await readLog(g); } finally { if (logBusy === g) logBusy = 0; }
  }
  async function readLog(g) {
    for (;;) {
      const res = await orch.get(base + "/logs?cue=" + encodeURIComponent(cue) + "&after=" + logAfter);
      if (g !== gen || !res.ok || !Array.isArray(res.data)) return;
      const pre = parts.log;
      for (const l of res.data) {
        pre.appendChild(orch.el("span", { class: "ln" + (l.stream === "stderr" ? " err" : "") }, l.agent + "#" + l.attempt + " " + l.line + "\n"));
        logAfter = l.seq;
      }
      while (pre.childNodes.length > TAIL) pre.removeChild(pre.firstChild);
      if (res.data.length && pre.childNodes.length) pre.scrollTop = pre.scrollHeight;
      if (res.data.length < PAGE) break;
    }
    parts.logNote.textContent = parts.log.childNodes.length ? "" : "No output yet.";
  }

  async function loadBoard(g) {
    const res = await orch.get(base + "/blackboard");
    if (g !== gen || !res.ok || !Array.isArray(res.data)) return;
    const rows = res.data.map((e) => orch.el("tr", null,
      orch.el("td", null, e.key), orch.el("td", { class: "num" }, "v" + e.version), orch.el("td", null, e.author || ""),
      orch.el("td", null, orch.el("pre", null, json(e.value)))));
    orch.clear(parts.board).appendChild(rows.length
      ? orch.el("table", { class: "board" }, orch.el("thead", null, orch.el("tr", null, orch.el("th", null, "key"), orch.el("th", null, "version"), orch.el("th", null, "author"), orch.el("th", null, "value"))), orch.el("tbody", null, rows))
      : orch.el("p", { class: "muted" }, "The blackboard is empty."));
  }
  const boardLater = orch.debounce(() => loadBoard(gen), 500);
  const logLater = orch.debounce(() => loadLog(gen), 300);

  function fill() {
    const st = getStatus(), c = (st.cues || []).find((x) => x.id === cue);
    if (!c) { orch.clear(parts.facts).appendChild(orch.el("p", { class: "muted" }, "This cue is not in the run's status.")); return; }
    orch.clear(parts.head).append(orch.el("h2", null, c.id + " ", orch.stateBadge(c.state)));
    const facts = [["agents", (c.agents || []).join(", ")], ["reason", c.reason], ["after", (c.after || []).join(", ")],
      ["warning", orch.time(c.warning_at)], ["standby", orch.time(c.standby_at)], ["go", orch.time(c.go_at)], ["ended", orch.time(c.ended_at)], ["cost", orch.cost(c)]];
    orch.clear(parts.facts).appendChild(orch.el("dl", null, facts.filter((f) => f[1]).map((f) => [orch.el("dt", null, f[0]), orch.el("dd", null, f[1])])));
    orch.clear(parts.attempts).appendChild(attempts(c));
    orch.clear(parts.outputs).appendChild(c.outputs && Object.keys(c.outputs).length ? orch.el("pre", { class: "outputs" }, json(c.outputs)) : orch.el("p", { class: "muted" }, "No output yet."));
    orch.clear(parts.tasks).appendChild(tasks(st, c.id));
  }

  return {
    show(id) {
      cue = id; gen++; logAfter = 0;
      const close = orch.el("button", { type: "button", class: "close", "aria-label": "close" }, "\u00d7");
      close.addEventListener("click", () => { cue = null; gen++; clearInterval(poller); onClose(); });
      ["head", "facts", "attempts", "outputs", "tasks", "board"].forEach((k) => { parts[k] = orch.el("div"); });
      parts.log = orch.el("pre", { class: "log" });
      parts.logNote = orch.el("p", { class: "muted" });
      orch.clear(box).append(close, parts.head, parts.facts,
        section("Attempts", parts.attempts), section("Outputs", parts.outputs),
        section("Log (tail)", orch.el("div", null, parts.log, parts.logNote)),
        section("Blackboard", parts.board), section("Tasks", parts.tasks));
      fill();
      const g = gen;
      loadLog(g);
      loadBoard(g);
      clearInterval(poller);
      // Log lines are not events: poll them while the run goes on.
      poller = setInterval(() => { if (g !== gen) return; if (!orch.finished(getStatus().state)) loadLog(g); }, 1500);
    },
    update() { if (cue) fill(); },
    event(ev) {
      if (!cue) return;
      if (ev.type === EvBlackboard) boardLater();
      if (ev.cue === cue && (ev.type === EvAttemptEnded || ev.type === EvCueState)) logLater();
    },
  };
}
