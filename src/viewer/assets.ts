import { ENTRY_STYLE } from "../interchange/entry-style.ts";

/**
 * The viewer's stylesheet and script, served as files (`/static/viewer.css`, `/static/viewer.js`):
 * the CSP allows no inline code. The script only reads JSON and HTML fragments from the server
 * itself and writes text with `textContent` (search hits) or inserts fragments the server escaped.
 */
export const VIEWER_CSS = `${ENTRY_STYLE}
:root { color-scheme: light dark; --fg: #1d2126; --bg: #fdfdfc; --muted: #5c6570; --line: #d8dde3; --accent: #0b57d0;
  --code-bg: #f2f4f7; --user: #eef4ff; --tool: #f6f7f9; --mark: #ffe58a; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --bg: #15171a; --muted: #a3acb7; --line: #333a42; --accent: #8ab4f8;
  --code-bg: #1f2328; --user: #1b2638; --tool: #1c1f23; --mark: #6b5800; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 4px; }
nav.top { display: flex; gap: 16px; align-items: center; padding: 8px 16px; border-bottom: 1px solid var(--line); }
nav.top .brand { font-weight: 700; text-decoration: none; } nav.top .mode { margin-left: auto; color: var(--muted); font-size: 13px; }
main { padding: 12px 16px 48px; }
code, pre, .output { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
pre { background: var(--code-bg); padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; word-break: break-word; border-radius: 4px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.id code { color: var(--muted); font-size: 12px; }
.flag { font-size: 12px; border: 1px solid var(--line); border-radius: 3px; padding: 0 4px; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: end; margin: 12px 0; }
.search input { width: min(640px, 100%); font-size: 16px; padding: 6px 8px; }
.hits { padding-left: 20px; } .hits li { margin: 6px 0; } .hits mark, mark { background: var(--mark); color: inherit; }
.hits .meta { color: var(--muted); font-size: 13px; }
.session-layout { display: grid; grid-template-columns: 280px minmax(0, 1fr); gap: 20px; }
@media (max-width: 900px) { .session-layout { grid-template-columns: 1fr; } }
aside.tree { font-size: 13px; border-right: 1px solid var(--line); padding-right: 12px; }
aside.tree li.current > a { font-weight: 700; } aside.tree li.current::marker { content: "▶ "; }
dl.facts { display: flex; flex-wrap: wrap; gap: 4px 20px; margin: 4px 0; } dl.facts div { display: flex; gap: 6px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
article.entry { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
article.role-user { background: var(--user); } article.role-toolResult { background: var(--tool); margin-left: 24px; }
article.entry:target { outline: 2px solid var(--accent); }
.tool-call summary code { font-weight: 600; } .error { color: #c5221f; }
img { max-width: 100%; height: auto; }
.chart svg { max-width: 900px; } .chart-bar { fill: var(--accent); } .chart-label, .chart-value { font-size: 12px; fill: var(--fg); }
table.compare td { width: 50%; } table.compare tr.same { opacity: 0.7; }
.live-status { color: var(--muted); font-size: 12px; }
`;

export const VIEWER_JS = `"use strict";
(function () {
  var q = document.getElementById("q");
  var hits = document.getElementById("hits");
  if (q && hits) {
    var timer = null, seq = 0;
    q.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(run, 120);
    });
    function run() {
      var mine = ++seq, text = q.value.trim();
      if (text === "") { hits.replaceChildren(); return; }
      fetch("/api/search?prefix=1&q=" + encodeURIComponent(text), { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (data) { if (mine === seq) show(data); })
        .catch(function () {});
    }
    function show(data) {
      var items = [];
      if (data.error) { var li = document.createElement("li"); li.textContent = data.error; items.push(li); }
      (data.hits || []).forEach(function (h) {
        var li = document.createElement("li");
        var a = document.createElement("a");
        a.href = "/s/" + encodeURIComponent(h.sessionId) + "#" + encodeURIComponent(h.entryId);
        a.textContent = h.title || h.sessionId;
        var meta = document.createElement("div");
        meta.className = "meta";
        meta.textContent = h.role + " · " + h.timestamp + " · " + h.cwd;
        var snip = document.createElement("div");
        h.snippet.forEach(function (part) {
          if (part.hit) { var m = document.createElement("mark"); m.textContent = part.text; snip.appendChild(m); }
          else snip.appendChild(document.createTextNode(part.text));
        });
        li.append(a, meta, snip);
        items.push(li);
      });
      hits.replaceChildren.apply(hits, items);
    }
  }
  if (document.querySelector("[data-cost-of]")) {
    fetch("/api/costs", { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (all) {
        document.querySelectorAll("[data-cost-of]").forEach(function (el) {
          var c = all[el.getAttribute("data-cost-of")];
          el.textContent = c ? c.cost : "";
        });
        document.querySelectorAll("[data-models-of]").forEach(function (el) {
          var c = all[el.getAttribute("data-models-of")];
          el.textContent = c ? c.models : "";
        });
      })
      .catch(function () {});
  }
  var statsEl = document.querySelector("[data-stat=models][data-src]");
  if (statsEl) {
    fetch(statsEl.getAttribute("data-src"), { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (st) {
        statsEl.textContent = st.models;
        var cost = document.querySelector("[data-stat=cost]");
        if (cost) cost.textContent = st.cost;
      })
      .catch(function () {});
  }
  var transcript = document.getElementById("transcript");
  // "show all" of a folded output: its whole text, fetched and set as text.
  document.addEventListener("click", function (ev) {
    var link = ev.target && ev.target.closest ? ev.target.closest("a.show-all") : null;
    if (!link) return;
    ev.preventDefault();
    fetch(link.getAttribute("href"), { credentials: "same-origin" })
      .then(function (r) { return r.text(); })
      .then(function (text) {
        var holder = link.parentNode;
        var pre = holder.previousElementSibling;
        if (pre && pre.tagName === "PRE") pre.textContent = text;
        holder.remove();
      });
  });
  var more = document.getElementById("more");
  function loadMore(then) {
    if (!more || !transcript) return;
    var link = more;
    more = null;
    fetch(link.getAttribute("href"), { credentials: "same-origin" })
      .then(function (r) { var next = r.headers.get("X-Next"); return r.text().then(function (t) { return [t, next]; }); })
      .then(function (res) {
        transcript.insertAdjacentHTML("beforeend", res[0]);
        if (res[1]) { link.setAttribute("href", link.getAttribute("href").replace(/from=\\d+/, "from=" + res[1])); more = link; }
        else link.parentNode.remove();
        if (then) then();
      });
  }
  if (more) {
    more.addEventListener("click", function (ev) { ev.preventDefault(); loadMore(); });
    if ("IntersectionObserver" in window) {
      new IntersectionObserver(function (items) { if (items.some(function (i) { return i.isIntersecting; })) loadMore(); })
        .observe(more.parentNode);
    }
  }
  function reveal() {
    var id;
    // A malformed escape in a link's fragment names no entry (and must not stop the script).
    try { id = decodeURIComponent(location.hash.slice(1)); } catch (err) { return; }
    if (id === "" || !transcript) return;
    var el = document.getElementById("e-" + id) || document.getElementById(id);
    if (el) {
      el.scrollIntoView();
      el.classList.add("target");
      return;
    }
    if (more) { loadMore(reveal); return; }
    // Not on the branch shown: show the branch that leads to it (once), the fragment kept.
    var params = new URLSearchParams(location.search);
    if (params.get("leaf") !== id) {
      params.set("leaf", id);
      location.replace(location.pathname + "?" + params.toString() + location.hash);
    }
  }
  window.addEventListener("hashchange", reveal);
  reveal();
  var live = document.body.getAttribute("data-live");
  if (live && transcript && transcript.getAttribute("data-follow") === "1" && "EventSource" in window) {
    var status = document.createElement("p");
    status.className = "live-status";
    status.setAttribute("role", "status");
    status.textContent = "live: new entries appear here";
    transcript.parentNode.insertBefore(status, transcript);
    var source = new EventSource(live);
    source.addEventListener("entries", function (ev) {
      var data = JSON.parse(ev.data);
      // With pages still to load, the new entries come with them; otherwise they are added here.
      if (!more) transcript.insertAdjacentHTML("beforeend", data.html);
      status.textContent = "live: " + data.count + " entries";
    });
    // The writer went back and continued on another branch: the page shows the new latest one.
    source.addEventListener("reload", function () {
      source.close();
      location.reload();
    });
  }
})();
`;
