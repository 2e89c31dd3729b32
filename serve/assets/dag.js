import * as orch from "./util.js";

// The run's DAG: a layered layout (longest-path layers, then two cheap
// barycentre sweeps to reduce crossings), drawn once as SVG; a cue's phase
// or the critical path changes only the classes of the nodes concerned.
// An edge that spans more than one layer is routed through a free slot of
// each layer it passes (a virtual node, ordered with the cues), so no edge
// crosses a cue's box: adjacent layers are joined inside the gap between
// them, where nothing is drawn.
const COMPACT = 400;   // above this many cues: small boxes without labels
const BIG = { w: 150, h: 34, gx: 56, gy: 14, lane: 8 };
const SMALL = { w: 16, h: 12, gx: 14, gy: 4, lane: 3 };

// layout places cues ({id, after}) in layers; it returns the nodes (with
// x, y), the edges [from, to], the order in which to visit them
// (topological), and each long edge's route through the layers between.
function layout(cues) {
  const n = cues.length;
  const index = new Map();
  cues.forEach((c, i) => index.set(c.id, i));
  const preds = new Array(n), succs = new Array(n), indeg = new Int32Array(n);
  for (let i = 0; i < n; i++) { preds[i] = []; succs[i] = []; }
  const edges = [];
  cues.forEach((c, i) => {
    for (const a of c.after || []) {
      const j = index.get(a);
      if (j === undefined || j === i) continue;
      preds[i].push(j); succs[j].push(i); indeg[i]++;
      edges.push([j, i]);
    }
  });
  // Kahn's order; a cycle (which orch refuses anyway) leaves nodes
  // behind: they go last, in their list order.
  const order = [];
  for (let i = 0; i < n; i++) if (indeg[i] === 0) order.push(i);
  for (let k = 0; k < order.length; k++) {
    for (const s of succs[order[k]]) if (--indeg[s] === 0) order.push(s);
  }
  if (order.length < n) {
    const seen = new Uint8Array(n);
    for (const i of order) seen[i] = 1;
    for (let i = 0; i < n; i++) if (!seen[i]) order.push(i);
  }
  const layer = new Int32Array(n);
  let layers = 1;
  if (edges.length === 0) {
    // No dependencies known: a grid, not one endless column.
    const rows = Math.max(6, Math.ceil(Math.sqrt(n / 2)));
    for (let i = 0; i < n; i++) layer[i] = Math.floor(i / rows);
    layers = Math.ceil(n / rows) || 1;
  } else {
    for (const i of order) {
      for (const p of preds[i]) if (layer[p] + 1 > layer[i]) layer[i] = layer[p] + 1;
      if (layer[i] + 1 > layers) layers = layer[i] + 1;
    }
  }
  const v = virtualNodes(n, edges, layer, 4 * n + 2000);
  const total = n + v.count;
  const vlayer = (k) => (k < n ? layer[k] : v.layer[k - n]);
  const byLayer = [];
  for (let l = 0; l < layers; l++) byLayer.push([]);
  for (let k = 0; k < total; k++) byLayer[vlayer(k)].push(k);
  const pos = new Float64Array(total);
  const place = (list) => list.forEach((k, at) => { pos[k] = at; });
  byLayer.forEach(place);
  const sweep = (l, nbrs) => {
    const list = byLayer[l];
    const key = new Float64Array(total);
    for (const k of list) {
      const ns = nbrs[k];
      if (!ns.length) { key[k] = pos[k]; continue; }
      let s = 0;
      for (const u of ns) s += pos[u];
      key[k] = s / ns.length;
    }
    list.sort((a, b) => key[a] - key[b] || pos[a] - pos[b]);
    place(list);
  };
  if (edges.length) {
    const up = v.count ? v.up : preds, down = v.count ? v.down : succs;
    for (let l = 1; l < layers; l++) sweep(l, up);
    for (let l = layers - 2; l >= 0; l--) sweep(l, down);
  }
  const size = n > COMPACT ? SMALL : BIG;
  // Down each layer, a cue takes its box and a gap, a virtual node a lane
  // (a thin slot an edge passes through); layers are centred on the tallest.
  const top = new Float64Array(total), tall = new Float64Array(layers);
  let height = 0;
  byLayer.forEach((list, l) => {
    const ordered = list.slice().sort((a, b) => pos[a] - pos[b]);
    let y = 0;
    for (const k of ordered) { top[k] = y; y += k < n ? size.h + size.gy : size.lane; }
    tall[l] = y;
    if (y > height) height = y;
  });
  const x = (k) => 8 + vlayer(k) * (size.w + size.gx);
  const y = (k) => 8 + top[k] + (height - tall[vlayer(k)]) / 2;
  const nodes = cues.map((c, i) => ({ cue: c, i: i, x: x(i), y: y(i) }));
  const lanes = [];
  for (let k = n; k < total; k++) lanes.push({ x: x(k), cy: y(k) + size.lane / 2 });
  let bottom = 8;
  for (let k = 0; k < total; k++) bottom = Math.max(bottom, y(k) + (k < n ? size.h : size.lane));
  return {
    nodes: nodes, edges: edges, preds: preds, order: order, size: size,
    // route(a, b): the lanes the edge a -> b passes, in order (none when
    // it joins adjacent layers).
    route: (a, b) => v.route(a, b).map((k) => lanes[k - n]),
    width: 16 + layers * (size.w + size.gx) - size.gx,
    height: bottom + 8,
  };
}

// virtualNodes routes the edges that skip layers through chains of
// virtual nodes (numbered from n), one node per layer passed. Edges share
// chains: each cue's long edges leave it on one trunk (or, when that takes
// fewer nodes, e.g. one cue after all the others, each cue's long edges
// reach it on one), so a layout has at most as many virtual nodes as
// cues times layers, and far fewer in practice; beyond budget none are
// made and long edges are drawn straight. up and down are every node's
// neighbours for the ordering sweeps.
function virtualNodes(n, edges, layer, budget) {
  const none = { count: 0, layer: [], up: [], down: [], route: () => [] };
  const lo = [new Int32Array(n).fill(-1), new Int32Array(n).fill(-1)];
  const hi = [new Int32Array(n).fill(-1), new Int32Array(n).fill(-1)];
  const long = edges.filter(([j, i]) => layer[i] - layer[j] > 1);
  if (!long.length) return none;
  for (const [j, i] of long) { // [0]: trunks leaving sources, [1]: reaching targets
    lo[0][j] = layer[j] + 1;
    if (layer[i] - 1 > hi[0][j]) hi[0][j] = layer[i] - 1;
    hi[1][i] = layer[i] - 1;
    if (lo[1][i] < 0 || layer[j] + 1 < lo[1][i]) lo[1][i] = layer[j] + 1;
  }
  const size = (m) => { let c = 0; for (let t = 0; t < n; t++) if (lo[m][t] >= 0) c += hi[m][t] - lo[m][t] + 1; return c; };
  const counts = [size(0), size(1)];
  const m = counts[1] < counts[0] ? 1 : 0;
  if (counts[m] > budget) return none;
  const first = new Int32Array(n).fill(-1), vl = [];
  for (let t = 0; t < n; t++) {
    if (lo[m][t] < 0) continue;
    first[t] = n + vl.length;
    for (let l = lo[m][t]; l <= hi[m][t]; l++) vl.push(l);
  }
  const total = n + vl.length;
  const up = new Array(total), down = new Array(total);
  for (let k = 0; k < total; k++) { up[k] = []; down[k] = []; }
  const link = (a, b) => { down[a].push(b); up[b].push(a); };
  for (let t = 0; t < n; t++) {
    if (first[t] < 0) continue;
    const last = first[t] + hi[m][t] - lo[m][t];
    for (let k = first[t]; k < last; k++) link(k, k + 1);
    if (m === 0) link(t, first[t]); else link(last, t);
  }
  const slot = (t, l) => first[t] + (l - lo[m][t]); // t's trunk in layer l
  for (const [j, i] of edges) {
    if (layer[i] - layer[j] <= 1) link(j, i);
    else if (m === 0) link(slot(j, layer[i] - 1), i);
    else link(j, slot(i, layer[j] + 1));
  }
  return {
    count: vl.length, layer: vl, up: up, down: down,
    route(a, b) {
      const out = [], t = m === 0 ? a : b;
      for (let l = layer[a] + 1; l < layer[b]; l++) out.push(slot(t, l));
      return out;
    },
  };
}

// edgePath draws the edges [from, to] of list: inside a gap between layers
// a curve (a line when compact), through a virtual slot a straight line.
function edgePath(L, list) {
  const s = L.size, parts = [];
  const join = (x1, y1, x2, y2) => {
    if (s === SMALL) return "L" + x2 + " " + y2;
    const mx = (x1 + x2) / 2;
    return "C" + mx + " " + y1 + " " + mx + " " + y2 + " " + x2 + " " + y2;
  };
  for (const [a, b] of list) {
    const A = L.nodes[a], B = L.nodes[b];
    let x = A.x + s.w, y = A.y + s.h / 2;
    let d = "M" + x + " " + y;
    for (const v of L.route(a, b)) {
      d += join(x, y, v.x, v.cy) + "L" + (v.x + s.w) + " " + v.cy;
      x = v.x + s.w; y = v.cy;
    }
    parts.push(d + join(x, y, B.x, B.y + s.h / 2));
  }
  return parts.join("");
}

function label(id, max) {
  return id.length > max ? id.slice(0, max - 1) + "\u2026" : id;
}

// countsText is a fan-out's items in a few characters: "2\u2713 1\u2717 1\u25b6 /5"
// (done, failed or stopped, running, of all).
export function countsText(items) {
  if (!items) return "";
  const parts = [];
  if (items.completed) parts.push(items.completed + "\u2713");
  if (items.failed + items.stopped) parts.push((items.failed + items.stopped) + "\u2717");
  if (items.running) parts.push(items.running + "\u25b6");
  return parts.join(" ") + " /" + items.count;
}

// fanView is the cues the DAG draws: the plan's, and the items of each
// fan-out in open (their ids), each after its fan-out; the cues that
// waited for an open fan-out wait for its items instead (the fan-in).
export function fanView(plan, all, open) {
  const items = new Map(); // fan-out id -> its items (cues), in item order
  for (const c of all) {
    if (c.kind === "item" && open.has(c.parent)) {
      if (!items.has(c.parent)) items.set(c.parent, []);
      items.get(c.parent).push(c);
    }
  }
  const ids = (id) => (items.get(id) || []).map((it) => it.id);
  const out = [];
  for (const c of plan) {
    let after = c.after || [];
    if (after.some((a) => items.has(a))) after = [].concat(...after.map((a) => (items.has(a) ? ids(a) : [a])));
    out.push(Object.assign({}, c, { after: after }));
    for (const it of items.get(c.id) || []) out.push(Object.assign({}, it, { after: [c.id] }));
  }
  return out;
}

// draw builds the SVG once; it returns {svg, setPhase(id, state),
// setCritical(ids)} and calls onPick(id) when a cue is clicked.
export function drawDAG(cues, onPick) {
  const L = layout(cues);
  const s = L.size, compact = s === SMALL;
  const svg = orch.svg("svg", {
    class: "dag" + (compact ? " compact" : ""), width: L.width, height: L.height,
    viewBox: "0 0 " + L.width + " " + L.height, role: "img", "aria-label": "the run's cues and their dependencies",
  });
  const edges = orch.svg("path", { class: "edges", d: edgePath(L, L.edges) });
  const critEdges = orch.svg("path", { class: "edges crit", d: "" });
  svg.appendChild(edges);
  svg.appendChild(critEdges);
  const frag = document.createDocumentFragment();
  const byId = new Map();
  for (const nd of L.nodes) {
    const c = nd.cue;
    let g, counts = null;
    if (compact) {
      g = orch.svg("rect", { x: nd.x, y: nd.y, width: s.w, height: s.h, rx: 3 }, orch.svg("title", { text: c.id }));
    } else if (c.items) {
      // A fan-out: a deck of cards with its items' counts; a click opens
      // it into its items (or closes it).
      counts = orch.svg("text", { class: "counts", x: 10, y: 29, text: countsText(c.items) });
      g = orch.svg("g", { transform: "translate(" + nd.x + "," + nd.y + ")" },
        orch.svg("rect", { class: "deck", x: 4, y: -4, width: s.w, height: s.h, rx: 7 }),
        orch.svg("rect", { width: s.w, height: s.h, rx: 7 }),
        orch.svg("text", { x: 10, y: 14, text: label(c.id, 14) }),
        orch.svg("text", { class: "toggle", x: s.w - 16, y: 14, text: c.open ? "\u2212" : "+" }),
        counts,
        orch.svg("title", { text: c.id + ": " + c.items.count + " items (click to " + (c.open ? "close" : "open") + ")" }));
      g.setAttribute("data-fanout", c.id);
    } else {
      g = orch.svg("g", { transform: "translate(" + nd.x + "," + nd.y + ")" },
        orch.svg("rect", { width: s.w, height: s.h, rx: 7 }),
        orch.svg("text", { x: 10, y: 21, text: label(c.id, 18) }),
        orch.svg("title", { text: c.id }));
    }
    g.setAttribute("data-cue", c.id);
    byId.set(c.id, { el: g, phase: orch.phase(c.state), crit: false, sel: false, counts: counts });
    frag.appendChild(g);
  }
  svg.appendChild(frag);
  svg.addEventListener("click", (ev) => {
    const t = ev.target.closest("[data-cue]");
    if (t) onPick(t.getAttribute("data-cue"), t.hasAttribute("data-fanout"));
  });
  const paint = (n) => n.el.setAttribute("class", "node s-" + n.phase + (n.crit ? " crit" : "") + (n.sel ? " sel" : ""));
  byId.forEach(paint);
  return {
    svg: svg,
    layout: L,
    has: (id) => byId.has(id),
    // setCounts shows a fan-out's items' counts (false: it has none drawn).
    setCounts(id, items) {
      const n = byId.get(id);
      if (!n || !n.counts) return false;
      n.counts.textContent = countsText(items);
      return true;
    },
    setPhase(id, state) {
      const n = byId.get(id);
      if (!n || n.phase === orch.phase(state)) return;
      n.phase = orch.phase(state);
      paint(n);
    },
    select(id) {
      byId.forEach((n, k) => { if (n.sel !== (k === id)) { n.sel = k === id; paint(n); } });
    },
    // setCritical marks the chain ids (in order) and the edges between them.
    setCritical(ids) {
      const on = new Set(ids);
      byId.forEach((n, k) => { if (n.crit !== on.has(k)) { n.crit = on.has(k); paint(n); } });
      const index = new Map();
      L.nodes.forEach((nd) => index.set(nd.cue.id, nd.i));
      const list = [];
      for (let k = 1; k < ids.length; k++) list.push([index.get(ids[k - 1]), index.get(ids[k])]);
      critEdges.setAttribute("d", edgePath(L, list));
    },
  };
}

// criticalPath is the chain of cues with the longest total attempt time
// (each cue weighs the sum of its attempts' durations, to now for one
// still going). Empty when no attempt has started or nothing depends on
// anything.
export function criticalPath(L, cues) {
  if (!L.edges.length) return [];
  const now = Date.now();
  const n = L.nodes.length;
  const w = new Float64Array(n);
  L.nodes.forEach((nd) => {
    const c = cues.get(nd.cue.id) || nd.cue;
    for (const a of c.attempts || []) {
      const s = orch.ms(a.started_at);
      if (isNaN(s)) continue;
      const e = a.ended_at ? orch.ms(a.ended_at) : now;
      if (e > s) w[nd.i] += e - s;
    }
  });
  const dist = new Float64Array(n), from = new Int32Array(n).fill(-1);
  let best = -1;
  for (const v of L.order) {
    let m = 0;
    for (const p of L.preds[v]) if (from[v] < 0 || dist[p] > m) { m = dist[p]; from[v] = p; }
    dist[v] = m + w[v];
    if (best < 0 || dist[v] > dist[best]) best = v;
  }
  if (best < 0 || dist[best] <= 0) return [];
  const chain = [];
  for (let v = best; v >= 0; v = from[v]) chain.push(L.nodes[v].cue.id);
  return chain.reverse();
}
