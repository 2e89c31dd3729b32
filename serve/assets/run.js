import * as orch from "./util.js";
import { criticalPath, drawDAG, fanView } from "./dag.js";
import { EvAttemptEnded, EvAttemptStarted, EvCueState, EvRunState } from "./events.js";
import { cuePanel } from "./panel.js";
import { feed } from "./runs.js";

// A run's view: its header (state, counts, cost, Stop, Retry), the DAG
// coloured by phase, the critical path, the timeline of attempts and the
// cue panel. It follows the run's events (the feed's stream): a cue's phase changes its
// node's class; the status is fetched again (at most once a second) for
// the counts, the critical path and the open panel.
const PHASES = ["waiting", "warning", "standby", "go", "completed", "failed", "blocked", "skipped", "stopped", "interrupted"];
const MAX_BARS = 300;

function legend() {
  return orch.el("ul", { class: "legend", "aria-label": "legend" },
    PHASES.map((p) => orch.el("li", null, orch.el("span", { class: "sw s-" + p }), p)),
    orch.el("li", null, orch.el("span", { class: "sw crit" }), "critical path"));
}

// timeline collects attempts from the events and draws them as bars.
function timeline(box) {
  const attempts = new Map();
  const draw = orch.debounce(() => {
    const list = Array.from(attempts.values()).sort((a, b) => a.start - b.start);
    const shown = list.length > MAX_BARS ? list.slice(list.length - MAX_BARS) : list;
    const now = Date.now();
    let t0 = Infinity, t1 = -Infinity;
    for (const a of shown) { t0 = Math.min(t0, a.start); t1 = Math.max(t1, a.end || now); }
    const span = Math.max(t1 - t0, 1);
    const frag = document.createDocumentFragment();
    for (const a of shown) {
      const bar = orch.el("span", { class: "bar s-" + orch.phase(a.state || "go"), title: a.cue + " " + a.agent + " #" + a.n + ": " + (a.state || "running") + " " + orch.duration((a.end || now) - a.start) });
      bar.style.left = ((a.start - t0) / span * 100).toFixed(3) + "%";
      bar.style.width = Math.max((((a.end || now) - a.start) / span) * 100, 0.3).toFixed(3) + "%";
      frag.appendChild(orch.el("div", { class: "trow", "data-cue": a.cue },
        orch.el("span", { class: "tlabel", title: a.cue }, a.cue + " \u00b7 " + a.agent + " #" + a.n),
        orch.el("span", { class: "track" }, bar)));
    }
    orch.clear(box);
    if (!list.length) { box.appendChild(orch.el("p", { class: "muted" }, "No attempt yet.")); return; }
    box.appendChild(orch.el("p", { class: "muted" }, (list.length > MAX_BARS ? "The last " + MAX_BARS + " of " + list.length + " attempts" : list.length + " attempt" + (list.length > 1 ? "s" : "")) + ", over " + orch.duration(t1 - t0)));
    box.appendChild(frag);
  }, 400);
  draw();
  return {
    event(ev) {
      const k = ev.cue + "\u0000" + ev.agent + "\u0000" + ev.attempt;
      if (ev.type === EvAttemptStarted) {
        attempts.set(k, { cue: ev.cue, agent: ev.agent || "", n: ev.attempt, start: orch.ms(ev.at), end: 0, state: "" });
        draw();
      } else if (ev.type === EvAttemptEnded) {
        const a = attempts.get(k);
        if (a) { a.end = orch.ms(ev.at); a.state = ev.state; draw(); }
      }
    },
    redraw: draw,
  };
}

export function runView(main, id) {
  let closed = false, unfollow = null, tick = null;
  const cleanup = () => { closed = true; if (unfollow) unfollow(); if (tick) clearInterval(tick); };
  (async () => {
    const res = await orch.get("api/runs/" + encodeURIComponent(id));
    if (closed) return;
    const fetched = performance.now();
    // Only now the run's events: replayed while the status is built, they
    // took the server's time from it (a run of 10,000 cues drew twice as late).
    feed.show(res.ok ? id : null);
    if (!res.ok) {
      orch.clear(main).appendChild(orch.el("p", { class: "error" }, "Run " + id + ": " + orch.errorText(res)));
      orch.rendered("run");
      return;
    }
    let status = res.data;
    const cues = new Map();
    const index = () => { cues.clear(); for (const c of status.cues || []) cues.set(c.id, c); };
    index();
    const plan = () => (status.cues || []).filter((c) => !c.parent && !c.depth);
    // The fan-outs opened into their items (a click on one), and those
    // the DAG draws as one (the cues that have items).
    const open = new Set();
    const fanouts = () => plan().filter((c) => c.items).map((c) => c.id).join(",");
    let drawnFanouts = fanouts();
    const view = () => fanView(plan(), status.cues || [], open).map((c) => Object.assign(c, { open: open.has(c.id) }));

    const title = orch.el("h1", null);
    const facts = orch.el("div", { class: "facts" });
    const msg = orch.el("p", { class: "msg", role: "status" });
    const stop = orch.el("button", { type: "button", class: "stop" }, "Stop");
    const retry = orch.el("button", { type: "button", class: "retry" }, "Retry");
    const dagBox = orch.el("div", { class: "dagbox" });
    const tlBox = orch.el("div", { class: "timeline" });
    const panelBox = orch.el("aside", { class: "panel", hidden: true });
    const panel = cuePanel(panelBox, id, () => status, () => { panelBox.hidden = true; dag.select(null); });
    let selected = null;
    const pick = (cue, fanout) => {
      selected = cue;
      panelBox.hidden = false; dag.select(cue); panel.show(cue);
      if (fanout) { if (open.has(cue)) open.delete(cue); else open.add(cue); redraw(); }
    };
    let dag = drawDAG(view(), pick);
    dagBox.appendChild(dag.svg);
    // redraw lays the DAG out again: a fan-out opened or closed, or one
    // that got its items.
    const redraw = () => {
      const next = drawDAG(view(), pick);
      dagBox.replaceChild(next.svg, dag.svg);
      dag = next;
      drawnFanouts = fanouts();
      if (selected) dag.select(selected);
      critical();
    };
    const tl = timeline(tlBox);

    const header = () => {
      orch.clear(title).append(document.createTextNode("Run " + status.id + " "), orch.stateBadge(status.state));
      const counts = status.counts || {};
      const parts = [["cuelist", status.cuelist], ["started", orch.time(status.started_at)], ["took", orch.took(status.started_at, status.ended_at)],
        ["cues", plan().length + " (" + Object.keys(counts).sort().map((k) => counts[k] + " " + orch.phaseName(k)).join(", ") + ")"],
        ["cost", orch.cost(status)], ["reason", status.reason]];
      orch.clear(facts).appendChild(orch.el("dl", null, parts.filter((p) => p[1]).map((p) => [orch.el("dt", null, p[0]), orch.el("dd", null, p[1])])));
      stop.hidden = status.state !== "running" && status.state !== "paused";
      retry.hidden = ["failed", "stopped", "interrupted"].indexOf(status.state) < 0;
    };
    const critical = () => dag.setCritical(criticalPath(dag.layout, cues));
    header();
    critical();

    stop.addEventListener("click", async () => {
      msg.textContent = "stopping...";
      const r = await orch.post("api/runs/" + encodeURIComponent(id) + "/stop");
      msg.textContent = r.ok ? orch.errorText(r) : "Stop refused: " + orch.errorText(r);
      refresh();
    });
    retry.addEventListener("click", async () => {
      msg.textContent = "retrying...";
      const r = await orch.post("api/runs/" + encodeURIComponent(id) + "/retry");
      if (r.ok) msg.textContent = orch.errorText(r);
      else if (r.status === 404 && !(r.data && /run/i.test(r.data.error || ""))) msg.textContent = "This server cannot retry a run: orch retry " + id + " does it in a terminal.";
      else msg.textContent = "Retry refused: " + orch.errorText(r);
      refresh();
    });

    orch.clear(main).appendChild(orch.el("section", { class: "run" },
      orch.el("div", { class: "runhead" }, orch.el("div", null, title, facts), orch.el("div", { class: "buttons" }, stop, retry)),
      msg,
      orch.el("div", { class: "runbody" },
        orch.el("div", { class: "graphs" },
          orch.el("h2", null, "Cues"), legend(), dagBox,
          orch.el("h2", null, "Timeline"), tlBox),
        panelBox)));
    orch.rendered("run");
    window.orchRendered.fetched = fetched;

    const refresh = orch.debounce(async () => {
      const r = await orch.get("api/runs/" + encodeURIComponent(id));
      if (closed || !r.ok) return;
      status = r.data;
      index();
      if (fanouts() !== drawnFanouts) redraw(); // a fan-out expanded: draw it as one, with its counts
      for (const c of status.cues || []) {
        dag.setPhase(c.id, c.state);
        if (c.items) dag.setCounts(c.id, c.items);
      }
      header();
      critical();
      panel.update();
    }, 1000);

    // The run's events come on the page's one stream (asked for above):
    // those that came while the page was drawn first.
    unfollow = feed.events((ev) => {
      if (ev.type === EvCueState && ev.cue) { // an item not drawn (its fan-out closed) changes nothing drawn
        dag.setPhase(ev.cue, ev.state);
        const c = cues.get(ev.cue);
        if (c) c.state = ev.state;
      } else if (ev.type === EvRunState) {
        status.state = ev.state;
        header();
      }
      tl.event(ev);
      panel.event(ev);
      refresh();
    });
    // Running times grow while nothing is written.
    tick = setInterval(() => { if (!orch.finished(status.state)) { header(); tl.redraw(); } }, 5000);
  })();
  return cleanup;
}
