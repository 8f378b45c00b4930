// Unsaved answers kept on the server as the item's draft, so that the same item opened on
// another device shows them: sent a moment after the last change (one request per pause, not
// per keystroke), and once more when the page is left.
(function () {
  "use strict";
  var form = document.getElementById("annotation-form");
  if (!form || !form.dataset.draftUrl) {
    return;
  }
  var url = form.dataset.draftUrl;
  var DELAY_MS = 800;
  var timer = null;
  var dirty = false;

  function body() {
    var data = new FormData(form);
    data.delete("client_token");
    data.delete("time_on_task_ms");
    return data;
  }

  function save() {
    timer = null;
    if (!dirty) {
      return;
    }
    dirty = false;
    fetch(url, { method: "POST", body: body(), credentials: "same-origin", keepalive: true });
  }

  function changed() {
    dirty = true;
    if (timer !== null) {
      clearTimeout(timer);
    }
    timer = setTimeout(save, DELAY_MS);
  }

  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  form.addEventListener("submit", function () {
    dirty = false;
    if (timer !== null) {
      clearTimeout(timer);
    }
  });
  window.addEventListener("pagehide", save);
})();
