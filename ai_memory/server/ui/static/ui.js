// Progressive enhancement only: every page reads without this file.
// The status page swaps in a fresh fragment every few seconds.
(function () {
  "use strict";
  var box = document.getElementById("status");
  if (!box || !box.dataset.refresh) { return; }
  function refresh() {
    fetch(box.dataset.refresh, {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) { box.innerHTML = html; box.dataset.refreshed = String(Date.now()); })
      .catch(function () { box.dataset.stale = "1"; })
      .finally(function () { setTimeout(refresh, 2000); });
  }
  setTimeout(refresh, 2000);
})();
