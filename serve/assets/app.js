import { runView } from "./run.js";
import { feed, runsView } from "./runs.js";

// The router: #/ is the runs, #/run/ID a run. The inbox and the runs feed
// live across views; the feed's one stream follows the run shown.
const main = document.getElementById("main");
let leave = null;
function route() {
  if (leave) { leave(); leave = null; }
  const m = /^#\/run\/(.+)$/.exec(location.hash);
  if (m) {
    let id;
    try { id = decodeURIComponent(m[1]); } catch (e) { id = m[1]; }
    document.title = "orch: run " + id;
    leave = runView(main, id); // it asks the feed for the run's events once it has its status
  } else {
    document.title = "orch: runs";
    feed.show(null);
    leave = runsView(main);
  }
  window.scrollTo(0, 0);
}
window.addEventListener("hashchange", route);
feed.start();
route();
