// Annotation page: keyboard answers, a check for missing answers before submit, and the visible
// time on task. The form works without this script (HTML `required`, plain POST); the server
// checks every answer again either way.
(function () {
  "use strict";

  var form = document.getElementById("annotation-form");
  if (!form) return;
  var groups = Array.prototype.slice.call(form.querySelectorAll("[data-answer-group]"));
  var submitButton = document.getElementById("submit-button");
  var statusLine = document.getElementById("form-status");
  var comment = document.getElementById("id_comment");
  var flag = document.getElementById("id_flagged");
  var skipReason = document.getElementById("id_skip_reason");
  var guidelines = document.getElementById("guidelines-link");
  var shortcuts = document.getElementById("shortcuts");
  var submitting = false;

  // Time on task counts only while the page is visible: a tab left in the background
  // while the annotator does something else is not time spent on the item.
  var visibleMs = 0;
  var visibleSince = document.visibilityState === "visible" ? performance.now() : null;
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      if (visibleSince === null) visibleSince = performance.now();
    } else if (visibleSince !== null) {
      visibleMs += performance.now() - visibleSince;
      visibleSince = null;
    }
  });
  function timeOnTask() {
    var running = visibleSince === null ? 0 : performance.now() - visibleSince;
    return Math.round(visibleMs + running);
  }

  function radiosOf(group) {
    return Array.prototype.slice.call(group.querySelectorAll("input[type=radio]"));
  }
  function isAnswered(group) {
    return group.querySelector("input[type=radio]:checked") !== null;
  }
  function missingGroups() {
    return groups.filter(function (group) { return !isAnswered(group); });
  }

  // The highlighted question is the one keys answer: the focused one, or else the one
  // highlighted last (at first, the first unanswered question).
  var active = null;
  function setActive(group) {
    if (active) active.classList.remove("is-active");
    active = group;
    if (active) active.classList.add("is-active");
  }
  function focusGroup(group) {
    var radios = radiosOf(group);
    var target = radios.filter(function (r) { return r.checked; })[0] || radios[0];
    setActive(group);
    target.focus({ preventScroll: true });
    group.scrollIntoView({ block: "nearest" });
  }
  function groupOf(element) {
    return element && element.closest ? element.closest("[data-answer-group]") : null;
  }

  function answer(group, input) {
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    var next = groups[groups.indexOf(group) + 1];
    if (next) {
      focusGroup(next);
    } else {
      setActive(null);
      submitButton.focus();
    }
  }

  // A key picks the option with that letter, or the n-th option for a digit.
  function optionForKey(group, key) {
    var radios = radiosOf(group);
    var byLetter = radios.filter(function (r) { return r.dataset.key === key; })[0];
    if (byLetter) return byLetter;
    if (/^[1-9]$/.test(key)) return radios[Number(key) - 1] || null;
    return null;
  }

  function showMissing() {
    var missing = missingGroups();
    groups.forEach(function (group) {
      group.classList.toggle("missing", missing.indexOf(group) !== -1);
    });
    if (missing.length) {
      statusLine.textContent = missing.length === 1
        ? "1 answer is missing."
        : missing.length + " answers are missing.";
      focusGroup(missing[0]);
    }
    return missing.length;
  }

  function trySubmit() {
    if (showMissing()) return;
    form.requestSubmit(submitButton);
  }

  // The script does the checking, so the browser's own bubbles are switched off; without the
  // script, `required` still stops an incomplete submit.
  form.noValidate = true;
  form.addEventListener("submit", function (event) {
    if (submitting || showMissing()) {
      event.preventDefault();
      return;
    }
    submitting = true;
    form.elements.namedItem("time_on_task_ms").value = String(timeOnTask());
    submitButton.disabled = true;
    statusLine.textContent = "";
  });
  // Coming back through the history cache must not leave the button disabled.
  window.addEventListener("pageshow", function () {
    submitting = false;
    submitButton.disabled = false;
  });

  form.addEventListener("change", function (event) {
    var group = groupOf(event.target);
    if (group && isAnswered(group)) {
      group.classList.remove("missing");
      if (statusLine.textContent) {
        var left = missingGroups().length;
        statusLine.textContent = left ? left + (left === 1 ? " answer is" : " answers are") + " missing." : "";
      }
    }
  });
  form.addEventListener("focusin", function (event) {
    var group = groupOf(event.target);
    if (group) setActive(group);
  });

  function isTyping(element) {
    if (!element || !element.matches) return false;
    return element.isContentEditable ||
      element.matches("textarea, select, input:not([type=radio]):not([type=checkbox]):not([type=submit]):not([type=button])");
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.isComposing) return;
    var target = event.target;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      if (form.contains(target) || target === document.body) {
        event.preventDefault();
        trySubmit();
      }
      return;
    }
    if (isTyping(target)) {
      if (event.key === "Escape" && target === comment) {
        event.preventDefault();
        comment.blur();
        submitButton.focus();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;

    if (event.key === "Enter") {
      // Enter on an answer submits; on a button or a link it keeps its own meaning.
      if (target.matches && target.matches("#annotation-form input[type=radio], #annotation-form input[type=checkbox]")) {
        event.preventDefault();
        trySubmit();
      }
      return;
    }

    var key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    var group = groupOf(target) || active || missingGroups()[0] || null;
    var option = group ? optionForKey(group, key) : null;
    if (option) {
      event.preventDefault();
      answer(group, option);
      return;
    }
    if (key === "f") {
      event.preventDefault();
      flag.checked = !flag.checked;
    } else if (key === "c") {
      event.preventDefault();
      comment.focus();
    } else if (key === "s" && skipReason) {
      event.preventDefault();
      skipReason.focus();
    } else if (key === "g") {
      event.preventDefault();
      window.open(guidelines.href, "_blank", "noopener");
    } else if (key === "?") {
      event.preventDefault();
      shortcuts.scrollIntoView({ block: "start" });
    }
  });

  setActive(missingGroups()[0] || null);
})();
