// Shared helpers: the API (with the token), the stream, and DOM builders
// that only ever put text in as text (never HTML).
const token = new URLSearchParams(location.search).get("token") || "";

function headers(extra) {
  const h = Object.assign({}, extra);
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

// get and post answer {ok, status, data}; data is the JSON body (or null).
async function call(path, init) {
  try {
    const r = await fetch(path, init);
    let data = null;
    try { data = await r.json(); } catch (e) { /* not JSON */ }
    return { ok: r.ok, status: r.status, data: data };
  } catch (e) {
    return { ok: false, status: 0, data: { error: String(e) } };
  }
}
export const get = (path) => call(path, { headers: headers(), cache: "no-store" });
export const post = (path, body) => call(path, {
  method: "POST",
  headers: headers({ "Content-Type": "application/json" }),
  body: JSON.stringify(body || {}),
});
export const errorText = (res) => (res.data && (res.data.error || res.data.message)) || ("HTTP " + res.status);

// stream opens an EventSource (it cannot send headers: the token goes in
// the query). The browser reconnects by itself with Last-Event-ID.
// The page keeps one open (browsers allow six connections to a host across
// all their tabs): how many are open is in the page's data-streams
// attribute (the tests read it).
let openStreams = 0;
const counted = (n) => { openStreams += n; document.documentElement.dataset.streams = String(openStreams); };
export function stream(path) {
  if (token) path += (path.indexOf("?") >= 0 ? "&" : "?") + "token=" + encodeURIComponent(token);
  const es = new EventSource(path);
  counted(1);
  const close = es.close.bind(es);
  let closed = false;
  es.close = () => { if (!closed) { closed = true; counted(-1); } close(); };
  return es;
}

function add(e, c) {
  if (c == null || c === false) return;
  if (Array.isArray(c)) { for (const x of c) add(e, x); return; }
  e.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
}
function build(e, props, kids) {
  if (props) {
    for (const k in props) {
      const v = props[k];
      if (v == null || v === false) continue;
      if (k === "class") e.setAttribute("class", v);
      else if (k === "text") e.textContent = String(v);
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
  }
  add(e, kids);
  return e;
}
// el("div", {class: "x"}, "text", child...): text children become text nodes.
export const el = (tag, props, ...kids) => build(document.createElement(tag), props, kids);
export const svg = (tag, props, ...kids) => build(document.createElementNS("http://www.w3.org/2000/svg", tag), props, kids);
export const clear = (e) => { while (e.firstChild) e.removeChild(e.firstChild); return e; };

export function time(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (isNaN(d)) return String(iso);
  const p = (n) => String(n).padStart(2, "0");
  return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + " " + p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
}
export const ms = (iso) => (iso ? Date.parse(iso) : NaN);
export function duration(ms) {
  if (!(ms >= 0)) return "";
  if (ms < 1000) return ms.toFixed(0) + "ms";
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + "s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + "m" + String(Math.floor(s % 60)).padStart(2, "0") + "s";
  const h = Math.floor(m / 60);
  if (h < 48) return h + "h" + String(m % 60).padStart(2, "0") + "m";
  return Math.floor(h / 24) + "d" + String(h % 24).padStart(2, "0") + "h";
}
// took is a run's or an attempt's duration, to now while it goes on.
export function took(start, end) {
  const a = ms(start);
  if (isNaN(a)) return "";
  const b = end ? ms(end) : Date.now();
  return duration(b - a);
}
// money is an amount of US dollars as orch prints it everywhere: to the
// cent, or to 4 significant digits under a cent (record.FormatUSD).
export function money(usd) {
  if (usd > 0 && usd < 0.01) {
    const s = usd.toFixed(3 - Math.floor(Math.log10(usd)));
    if (Number(s) < 0.01) return "$" + s.replace(/0+$/, "");
  }
  return "$" + usd.toFixed(2);
}
export function cost(o) {
  if (o && o.cost_usd > 0) return money(o.cost_usd);
  if (o && o.credits > 0) return o.credits + " cr";
  return "";
}
// stateBadge is a coloured run or cue state.
export const stateBadge = (state) => el("span", { class: "badge s-" + phase(state) }, phaseName(state));
// phase maps a state to its colour class (a pending cue is "waiting").
export const phase = (state) => (!state || state === "pending" ? "waiting" : String(state).replace(/[^a-z-]/g, ""));
export const phaseName = (state) => (!state || state === "pending" ? "waiting" : String(state));
export const finished = (state) => ["completed", "failed", "stopped", "interrupted"].indexOf(state) >= 0;

// debounce calls f at most once per wait ms, with the last call's arguments.
export function debounce(f, wait) {
  let timer = null, args = null;
  return function () {
    args = arguments;
    if (timer) return;
    timer = setTimeout(() => { timer = null; f.apply(null, args); }, wait);
  };
}

// rendered records when a view finished its first render (for the tests
// and for anyone curious: performance.getEntriesByName("orch-rendered")).
export function rendered(what) {
  const t = performance.now();
  window.orchRendered = { view: what, ms: t };
  try { performance.mark("orch-rendered", { detail: what }); } catch (e) { /* old browser */ }
}
