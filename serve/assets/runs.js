import * as orch from "./util.js";
import { inbox } from "./inbox.js";

// The runs: one feed for the whole page, and the runs view that lists them,
// newest first. The feed is the page's one connection that stays open
// (browsers allow six to a host, across all their tabs): the global stream
// /api/stream with the run list and the inbox, and, on a run's view, that
// run's events too (?run=ID). It is opened again when the view changes,
// closed when the page is hidden away (pagehide: a page kept in the
// back-forward cache must not hold a connection) and opened again when it
// comes back. Where the server has no such stream, /api/runs is polled
// every 2 s.
const subs = new Set();
let latest = null;
const live = (text, cls) => { const e = document.getElementById("live"); e.textContent = text; e.className = "live " + cls; };

function publish(runs, refreshInbox) {
  if (!Array.isArray(runs)) return;
  latest = runs;
  subs.forEach((f) => f(runs));
  if (refreshInbox) inbox.refresh(runs);
}
let es = null, polling = null;
let streaming = false; // the global stream has delivered: the badge is its
let run = null; // the run whose events the stream carries
let lastSeq = 0; // the last of its events delivered
let handler = null, buffered = [];

async function poll() {
  const res = await orch.get("api/runs");
  if (streaming) return; // the first poll answered after the stream's snapshot
  if (res.ok) { publish(res.data, true); live("polling", "poll"); } else live("offline", "off");
}
function close() {
  if (es) { es.close(); es = null; }
}
function open() {
  close();
  // A stream opened again for the same run goes on after what came (the
  // browser sends Last-Event-ID only when it reconnects by itself).
  const after = lastSeq ? "after=" + lastSeq : "";
  let path = "api/stream" + (run ? "?run=" + encodeURIComponent(run) + (after && "&" + after) : "");
  if (polling) { // no global stream: the run's own, if a run is shown
    if (!run) return;
    path = "api/runs/" + encodeURIComponent(run) + "/stream" + (after && "?" + after);
  }
  const s = es = orch.stream(path);
  s.addEventListener("runs", (ev) => {
    streaming = true;
    live("live", "on");
    try { publish(JSON.parse(ev.data), false); } catch (e) { /* a bad snapshot: keep the last */ }
  });
  s.addEventListener("inbox", (ev) => {
    try { inbox.show(JSON.parse(ev.data)); } catch (e) { /* keep the last */ }
  });
  s.addEventListener("event", (m) => {
    let ev;
    try { ev = JSON.parse(m.data); } catch (e) { return; }
    if (ev.seq > lastSeq) lastSeq = ev.seq;
    if (handler) handler(ev); else buffered.push(ev);
  });
  s.onerror = () => {
    if (s.readyState !== EventSource.CLOSED) { live("reconnecting", "off"); return; }
    if (s !== es) return;
    if (polling) { close(); return; }
    streaming = false;
    if (run) { run = null; open(); return; } // no such run (404): the lists still come
    // No global stream here (404): poll.
    polling = setInterval(poll, 2000);
    open();
  };
}
export const feed = {
  start() {
    poll(); // the first list at once, whatever the stream does
    window.addEventListener("pagehide", close);
    window.addEventListener("pageshow", (ev) => { if (ev.persisted) open(); });
  },
  // show opens the stream for a view: id's events with the lists, or the
  // lists alone (id null). The runs view asks for the lists when the
  // router shows it, a run's view for its events once it has its status.
  show(id) {
    id = id || null;
    if (es && id === run) return;
    run = id; lastSeq = 0; handler = null; buffered = [];
    open();
  },
  // events hands the run's events to f, those already come first; the
  // function returned stops it.
  events(f) {
    handler = f;
    const early = buffered;
    buffered = [];
    early.forEach(f);
    return () => { if (handler === f) handler = null; };
  },
  subscribe(f) { subs.add(f); if (latest) f(latest); return () => subs.delete(f); },
  runs: () => latest,
};

const columns = ["run", "state", "cuelist", "started", "took", "cues", "cost", "questions"];

function row(r) {
  const href = "#/run/" + encodeURIComponent(r.id);
  const cues = [r.completed + "/" + r.cues];
  if (r.failed) cues.push(" ", orch.el("span", { class: "bad" }, r.failed + " failed"));
  return orch.el("tr", { "data-run": r.id },
    orch.el("td", { class: "c-run" }, orch.el("a", { href: href }, r.id)),
    orch.el("td", { class: "c-state" }, orch.stateBadge(r.state)),
    orch.el("td", { class: "c-cuelist", title: r.reason || null }, r.cuelist),
    orch.el("td", { class: "c-started" }, orch.time(r.started_at)),
    orch.el("td", { class: "c-took num" }, orch.took(r.started_at, r.ended_at)),
    orch.el("td", { class: "c-cues num" }, cues),
    orch.el("td", { class: "c-cost num" }, orch.cost(r)),
    orch.el("td", { class: "c-questions num" }, r.open_questions ? orch.el("span", { class: "ask" }, String(r.open_questions)) : ""));
}
const newestFirst = (a, b) => String(b.started_at || "").localeCompare(String(a.started_at || "")) || String(b.id).localeCompare(String(a.id));

export function runsView(main) {
  const tbody = orch.el("tbody");
  const head = orch.el("tr", null, columns.map((c) => orch.el("th", { class: "c-" + c }, c)));
  const empty = orch.el("p", { class: "muted" }, "No runs yet: orch run CUELIST records one here.");
  orch.clear(main).appendChild(orch.el("section", { class: "runs" },
    orch.el("h1", null, "Runs ", orch.el("span", { class: "muted", id: "runcount" })),
    orch.el("div", { class: "scroll" }, orch.el("table", { class: "runs" }, orch.el("thead", null, head), tbody)), empty));
  let rows = new Map(); // id -> {tr, sig}
  let order = "";
  let first = true;
  const update = (runs) => {
    runs = runs.slice().sort(newestFirst);
    const ids = runs.map((r) => r.id).join("\u0000");
    if (ids !== order) {
      const frag = document.createDocumentFragment();
      const next = new Map();
      for (const r of runs) {
        const sig = JSON.stringify(r);
        const old = rows.get(r.id);
        const tr = old && old.sig === sig ? old.tr : row(r);
        next.set(r.id, { tr: tr, sig: sig });
        frag.appendChild(tr);
      }
      orch.clear(tbody).appendChild(frag);
      rows = next; order = ids;
    } else {
      for (const r of runs) {
        const sig = JSON.stringify(r), old = rows.get(r.id);
        if (old.sig !== sig || !r.ended_at) {
          const tr = row(r);
          old.tr.replaceWith(tr);
          rows.set(r.id, { tr: tr, sig: sig });
        }
      }
    }
    empty.hidden = runs.length > 0;
    document.getElementById("runcount").textContent = runs.length ? "(" + runs.length + ")" : "";
    if (first) { first = false; orch.rendered("runs"); }
  };
  return feed.subscribe(update);
}
