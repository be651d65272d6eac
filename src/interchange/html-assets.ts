import { createHash } from "node:crypto";
import { ENTRY_STYLE } from "./entry-style.ts";

/** The page's only style sheet (inline; the CSP allows exactly this text by its hash). */
export const HTML_STYLE = `
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fff; --muted: #666; --line: #ddd; --user: #eef5ff; --tool: #f6f6f6; }
@media (prefers-color-scheme: dark) { :root { --fg: #ddd; --bg: #18191b; --muted: #999; --line: #333; --user: #1d2a3a; --tool: #222; } }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); max-width: 60rem; margin: 0 auto; padding: 1rem; }
header dl { display: grid; grid-template-columns: max-content 1fr; gap: 0 1rem; color: var(--muted); }
article.entry { border: 1px solid var(--line); border-radius: 6px; margin: 0.75rem 0; padding: 0.5rem 0.75rem; }
article.role-user { background: var(--user); }
article.role-toolResult { background: var(--tool); }
article.entry h2 { font-size: 0.85rem; margin: 0 0 0.25rem; color: var(--muted); font-weight: 600; }
.text, pre { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { font: 13px/1.4 ui-monospace, monospace; background: var(--tool); padding: 0.5rem; margin: 0.25rem 0; }
details > summary { cursor: pointer; color: var(--muted); }
details.thinking > summary { font-style: italic; }
img { max-width: 100%; height: auto; display: block; margin: 0.25rem 0; }
nav.fork { margin: -0.25rem 0 0.75rem 1rem; font-size: 0.85rem; color: var(--muted); }
nav.fork button { margin-left: 0.25rem; }
nav.fork button.current { font-weight: 700; }
.error { color: #c33; }
${ENTRY_STYLE}`;

/**
 * The page's only script (inline, allowed by its hash): shows the branch ending at a leaf and, at
 * each fork on it, buttons that switch to the newest leaf under another child. It reads the tree
 * from the JSON data block `#ts-tree` ({leaf, nodes: [[id, parentId], …]} in file order).
 */
export const HTML_SCRIPT = `
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("ts-tree").textContent);
  // Maps and Sets, never plain objects: an id may be "constructor", "toString" or "__proto__".
  var parent = new Map(), children = new Map(), order = new Map();
  data.nodes.forEach(function (n, i) {
    var p = n[1] === null ? "" : n[1];
    parent.set(n[0], p); order.set(n[0], i);
    if (!children.has(p)) children.set(p, []);
    children.get(p).push(n[0]);
  });
  function newestLeaf(id) {
    var best = id, stack = [id];
    while (stack.length > 0) {
      var x = stack.pop();
      if (order.get(x) > order.get(best)) best = x;
      (children.get(x) || []).forEach(function (c) { stack.push(c); });
    }
    return best;
  }
  function pathTo(leaf) {
    var on = new Set(), x = leaf;
    while (x !== undefined && x !== "" && !on.has(x)) { on.add(x); x = parent.get(x); }
    return on;
  }
  function show(leaf) {
    var on = pathTo(leaf);
    document.querySelectorAll("[data-entry]").forEach(function (el) { el.hidden = !on.has(el.getAttribute("data-entry")); });
    document.querySelectorAll("nav.fork").forEach(function (n) { n.remove(); });
    children.forEach(function (kids, id) {
      if (kids.length < 2 || (id !== "" && !on.has(id))) return;
      var nav = document.createElement("nav");
      nav.className = "fork";
      nav.appendChild(document.createTextNode("Branches here:"));
      kids.forEach(function (k, i) {
        var b = document.createElement("button");
        b.type = "button";
        b.textContent = String(i + 1);
        b.setAttribute("data-child", k);
        if (on.has(k)) b.className = "current";
        b.addEventListener("click", function () { show(newestLeaf(k)); });
        nav.appendChild(b);
      });
      var at = id === "" ? null : document.getElementById("e-" + id);
      if (at) at.after(nav); else document.getElementById("transcript").prepend(nav);
    });
    document.body.setAttribute("data-leaf", leaf);
  }
  if (data.leaf !== null) show(data.leaf);
})();
`;

function hashOf(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/**
 * The page's Content-Security-Policy: nothing may load from anywhere (no fetch, no frame, no
 * font, no form target), images only from `data:` URLs, and only the page's own style and script.
 */
export const HTML_CSP = [
  "default-src 'none'",
  "img-src data:",
  `style-src ${hashOf(HTML_STYLE)}`,
  `script-src ${hashOf(HTML_SCRIPT)}`,
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");
