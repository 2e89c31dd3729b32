"use strict";
// The runs: one feed for the whole page (the global stream /api/stream,
// or /api/runs polled every 2 s where the server has no such stream), and
// the runs view that lists them, newest first.
(function (orch) {
  const subs = new Set();
  let latest = null;
  const live = (text, cls) => { const e = document.getElementById("live"); e.textContent = text; e.className = "live " + cls; };

  function publish(runs) {
    if (!Array.isArray(runs)) return;
    latest = runs;
    subs.forEach((f) => f(runs));
    orch.inbox.refresh(runs);
  }
  let streaming = false; // the global stream has delivered: the badge is its
  async function poll() {
    const res = await orch.get("api/runs");
    if (streaming) return; // the first poll answered after the stream's snapshot
    if (res.ok) { publish(res.data); live("polling", "poll"); } else live("offline", "off");
  }
  orch.feed = {
    start() {
      poll(); // the first list at once, whatever the stream does
      const es = orch.stream("api/stream");
      es.addEventListener("runs", (ev) => {
        streaming = true;
        live("live", "on");
        try { publish(JSON.parse(ev.data)); } catch (e) { /* a bad snapshot: keep the last */ }
      });
      es.onerror = () => {
        if (es.readyState !== EventSource.CLOSED) { live("reconnecting", "off"); return; }
        streaming = false;
        // No global stream here (404): poll.
        es.close();
        setInterval(poll, 2000);
      };
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

  orch.runsView = function (main) {
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
    return orch.feed.subscribe(update);
  };
})(window.orch);
