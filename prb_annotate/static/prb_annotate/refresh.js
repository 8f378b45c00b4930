/* Reload the page every data-seconds seconds (the campaign dashboard while the campaign is
   active), but never while the manager is typing in a form or has one open: a reload would
   throw away what they entered. */
(function () {
  "use strict";
  var script = document.currentScript;
  var seconds = parseInt(script && script.dataset.seconds, 10) || 60;

  function busy() {
    var active = document.activeElement;
    if (active && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) {
      return true;
    }
    return document.querySelector("details[open] form") !== null;
  }

  window.setInterval(function () {
    if (document.visibilityState === "visible" && !busy()) {
      window.location.reload();
    }
  }, seconds * 1000);
})();
