// Progressive enhancement only: every page reads without this file.
// - <time datetime> elements show the browser's local time and how long ago, the exact moment on hover;
// - "/" focuses the search box (not while typing in a field);
// - the status page swaps in a fresh fragment every few seconds.
(function () {
  "use strict";
  var REFRESH_MS = 3000;
  var UNITS = [[86400, "d"], [3600, "h"], [60, "min"]];

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function clock(d, seconds) {
    return pad(d.getHours()) + ":" + pad(d.getMinutes()) + (seconds ? ":" + pad(d.getSeconds()) : "");
  }

  function day(d) {
    var opts = {day: "numeric", month: "short"};
    if (d.getFullYear() !== new Date().getFullYear()) { opts.year = "numeric"; }
    return d.toLocaleDateString(undefined, opts);
  }

  function ago(d) {
    var s = Math.round((Date.now() - d.getTime()) / 1000);
    if (s < 0) { return "in the future"; }
    if (s < 45) { return "just now"; }
    if (s >= 7 * 86400) { return day(d); }
    for (var i = 0; i < UNITS.length; i++) {
      if (s >= UNITS[i][0]) { return Math.round(s / UNITS[i][0]) + " " + UNITS[i][1] + " ago"; }
    }
    return "1 min ago";
  }

  function zone() {
    try { return Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return ""; }
  }

  function localize(root) {
    var times = (root || document).querySelectorAll("time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var t = times[i], d = new Date(t.getAttribute("datetime"));
      if (isNaN(d.getTime())) { continue; }
      var style = t.getAttribute("data-style");
      var exact = d.toLocaleString(undefined, {weekday: "short", year: "numeric", month: "short", day: "numeric",
        hour: "2-digit", minute: "2-digit", second: "2-digit"});
      t.title = exact + (zone() ? " (" + zone() + ")" : "") + " · " + ago(d);
      if (style === "clock") {
        t.textContent = clock(d, true);
      } else if (style === "day") {
        t.textContent = day(d);
      } else {
        var rel = ago(d);
        t.textContent = rel === day(d) ? rel + ", " + clock(d) : rel;
      }
      t.setAttribute("data-local", "1");
    }
  }

  function typing(el) {
    if (!el) { return false; }
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  document.addEventListener("keydown", function (e) {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) { return; }
    var box = document.getElementById("q");
    if (!box) { return; }
    e.preventDefault();
    box.focus();
    box.select();
  });

  localize(document);
  setInterval(function () { localize(document); }, 30000);

  var status = document.getElementById("status");
  if (!status || !status.dataset.refresh) { return; }
  function refresh() {
    fetch(status.dataset.refresh, {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        status.innerHTML = html;
        localize(status);
        status.dataset.refreshed = String(Date.now());
        delete status.dataset.stale;
      })
      .catch(function () { status.dataset.stale = "1"; })
      .finally(function () { setTimeout(refresh, REFRESH_MS); });
  }
  setTimeout(refresh, REFRESH_MS);
})();
