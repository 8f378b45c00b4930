// Annotation page: keyboard answers, the answer panel that keeps the highlighted question in
// view (a compact bar on narrow screens), a check for missing answers before submit, the time
// on task (and its visible timer when the campaign shows one), the length of each answer, the
// reading keys (Space, J/K: the texts scroll from any focus state) and, when the campaign asks
// for it, one confirmation before submitting responses that were mostly never on screen.
// The form works without this script (HTML `required`, plain POST); the server checks every
// answer again either way.
(function () {
  "use strict";

  // The page's language comes from Django's JavaScript catalogue (/jsi18n/, loaded before this
  // script); without it the words stay English.
  var gettext = window.gettext || function (text) { return text; };
  var ngettext = window.ngettext || function (one, many, n) { return n === 1 ? one : many; };
  var interpolate = window.interpolate || function (format, values) {
    return format.replace(/%\(\w+\)s/g, function (match) { return String(values[match.slice(2, -2)]); });
  };

  var form = document.getElementById("annotation-form");
  if (!form) return;
  document.documentElement.classList.add("js");

  var panel = document.getElementById("answer-panel");
  var panelHead = panel.querySelector(".panel-head");
  var groups = Array.prototype.slice.call(form.querySelectorAll("[data-answer-group]"));
  var finish = document.getElementById("finish");
  var submitButton = document.getElementById("submit-button");
  var statusLine = document.getElementById("form-status");
  var keyMessage = document.getElementById("key-message");
  var answeredCount = document.getElementById("answered-count");
  var comment = document.getElementById("id_comment");
  var flag = document.getElementById("id_flagged");
  var skipReason = document.getElementById("id_skip_reason");
  var guidelines = document.getElementById("guidelines-link");
  var shortcuts = document.getElementById("shortcuts");
  var previousItem = document.getElementById("previous-item");
  var panelNav = document.getElementById("panel-nav");
  var panelToggle = document.getElementById("panel-toggle");
  var narrow = window.matchMedia("(max-width: 899px)");
  // A touch screen has no Space key to read on with: its messages say "scroll" instead.
  var touchOnly = window.matchMedia("(hover: none) and (pointer: coarse)");
  var beforeShortcuts = null; // the element that had the focus when ? opened the shortcuts
  var texts = document.getElementById("texts");
  var submitting = false;

  // --- time on task -------------------------------------------------------------------
  // It counts only while the page is visible: a tab left in the background while the
  // annotator does something else is not time spent on the item.
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

  var timer = document.getElementById("timer");
  function showTime() {
    var seconds = Math.floor(timeOnTask() / 1000);
    var minutes = Math.floor(seconds / 60);
    var text = minutes + ":" + String(seconds % 60).padStart(2, "0");
    if (minutes >= 60) {
      text = Math.floor(minutes / 60) + ":" + String(minutes % 60).padStart(2, "0") + ":" +
        String(seconds % 60).padStart(2, "0");
    }
    timer.textContent = text;
  }
  if (timer) {
    showTime();
    window.setInterval(showTime, 1000);
  }

  // --- the length of each answer ------------------------------------------------------
  // A long answer scrolls inside its own pane; its length (and time to read) says how much there
  // is to read, and the note changes once the annotator has scrolled to its end.
  Array.prototype.forEach.call(document.querySelectorAll("[data-length-of]"), function (label) {
    var pane = document.getElementById(label.dataset.lengthOf);
    if (!pane) return;
    // Counted by the server: words, or characters in scripts without spaces between words.
    var base = label.dataset.length;
    function update() {
      if (pane.scrollHeight <= pane.clientHeight + 2) {
        label.textContent = "· " + base;
      } else if (pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 4) {
        label.textContent = "· " + base + " · " + gettext("read to the end");
      } else {
        label.textContent = "· " + base + " · " + gettext("scroll inside to read it all");
      }
    }
    update();
    pane.addEventListener("scroll", update, { passive: true });
    window.addEventListener("resize", update);
  });


  // --- reading keys -------------------------------------------------------------------------
  // Space / Shift+Space scroll the texts by a screen, J/K (and the arrows where they change no
  // answer) by a few lines, as a browser page does: on wide screens the texts are a pane of
  // their own, which the browser's keys never reach once the focus is on an answer. A focused
  // response that can still scroll that way scrolls first, as a nested pane does in a page.
  var LINES_PER_STEP = 4;
  var SCREEN_SHARE = 0.85; // a little of the last screen stays in view

  function textsScroller() {
    var own = getComputedStyle(texts).overflowY;
    return (own === "auto" || own === "scroll") ? texts : document.scrollingElement;
  }
  // The part of the window the texts are seen in: [top, bottom] in window coordinates.
  function textsWindow() {
    if (textsScroller() === texts) {
      var box = texts.getBoundingClientRect();
      return [Math.max(box.top, 0), Math.min(box.bottom, window.innerHeight)];
    }
    var room = narrow.matches && getComputedStyle(panel).position === "fixed" ? panel.offsetHeight : 0;
    return [0, window.innerHeight - room];
  }
  function canScroll(element, pixels) {
    return pixels > 0
      ? element.scrollTop + element.clientHeight < element.scrollHeight - 1
      : element.scrollTop > 0;
  }
  function responsePane(element) {
    return element && element.classList && element.classList.contains("response-text") ? element : null;
  }
  function scrollTexts(from, direction, screens) {
    var pane = responsePane(from);
    var view = textsWindow();
    var line = parseFloat(getComputedStyle(texts).lineHeight) || 22;
    if (pane && canScroll(pane, direction)) {
      var paneStep = screens ? pane.clientHeight * SCREEN_SHARE : line * LINES_PER_STEP;
      pane.scrollBy(0, direction * Math.max(line, Math.round(paneStep)));
      return;
    }
    var step = screens ? (view[1] - view[0]) * SCREEN_SHARE : line * LINES_PER_STEP;
    textsScroller().scrollBy(0, direction * Math.max(line, Math.round(step)));
  }
  function readingKey(event) {
    var target = event.target;
    var radio = target.matches && target.matches("input[type=radio]");
    if (event.key === " " || event.key === "PageDown" || event.key === "PageUp") {
      if (event.key !== " " && responsePane(target)) return false; // the pane's own keys
      var up = event.key === "PageUp" || (event.key === " " && event.shiftKey);
      scrollTexts(target, up ? -1 : 1, true);
      return true;
    }
    if ((event.key === "ArrowDown" || event.key === "ArrowUp") && !radio && !responsePane(target)) {
      scrollTexts(target, event.key === "ArrowUp" ? -1 : 1, false);
      return true;
    }
    return false;
  }

  // --- what has been read -------------------------------------------------------------------
  // Each response is cut into 100 slices; a slice counts as seen once it has been inside the
  // window's view of the texts (and of its own pane). The share never goes down.
  var SLICES = 100;
  var readingCheck = form.dataset.readingCheck === "on";
  var readingAsked = false;
  var seenSlices = {};
  function markSeen() {
    var view = textsWindow();
    ["A", "B"].forEach(function (side) {
      var pane = document.getElementById("response-" + side);
      if (!pane) return;
      var slices = seenSlices[side] || (seenSlices[side] = new Uint8Array(SLICES));
      var box = pane.getBoundingClientRect();
      var top = Math.max(box.top, view[0]);
      var bottom = Math.min(box.bottom, view[1]);
      if (bottom <= top || pane.scrollHeight === 0) return;
      var from = (pane.scrollTop + top - box.top) / pane.scrollHeight;
      var to = (pane.scrollTop + bottom - box.top) / pane.scrollHeight;
      for (var i = Math.floor(from * SLICES); i < Math.min(SLICES, Math.ceil(to * SLICES)); i++) {
        slices[i] = 1;
      }
    });
  }
  function seenShare(side) {
    var slices = seenSlices[side];
    if (!slices) return 0;
    var count = 0;
    for (var i = 0; i < SLICES; i++) count += slices[i];
    return count / SLICES;
  }
  function unreadSides() {
    markSeen();
    return ["A", "B"].filter(function (side) {
      return document.getElementById("response-" + side) && seenShare(side) < 0.5;
    });
  }
  // The shares seen, in percent, on the texts pane ("A,B"), for whoever checks the page.
  function noteSeen() {
    markSeen();
    texts.dataset.seen = Math.round(seenShare("A") * 100) + "," + Math.round(seenShare("B") * 100);
  }
  window.addEventListener("scroll", noteSeen, { passive: true });
  texts.addEventListener("scroll", noteSeen, { passive: true });
  window.addEventListener("resize", noteSeen);
  Array.prototype.forEach.call(document.querySelectorAll(".response-text"), function (pane) {
    pane.addEventListener("scroll", noteSeen, { passive: true });
  });

  // --- messages -------------------------------------------------------------------------
  var messageTimer = null;
  function say(text) {
    keyMessage.textContent = text;
    if (messageTimer) window.clearTimeout(messageTimer);
    messageTimer = window.setTimeout(function () { keyMessage.textContent = ""; }, 5000);
  }

  // --- questions ----------------------------------------------------------------------
  function radiosOf(group) {
    return Array.prototype.slice.call(group.querySelectorAll("input[type=radio]"));
  }
  function isAnswered(group) {
    return group.querySelector("input[type=radio]:checked") !== null;
  }
  function missingGroups() {
    return groups.filter(function (group) { return !isAnswered(group); });
  }
  function groupOf(element) {
    return element && element.closest ? element.closest("[data-answer-group]") : null;
  }
  function countAnswers() {
    var done = groups.length - missingGroups().length;
    answeredCount.textContent = interpolate(gettext("%(done)s of %(total)s answered"), { done: done, total: groups.length }, true);
  }

  // Scroll the panel, and only the panel, so that the element shows below its sticky head.
  function reveal(element) {
    var box = panel.getBoundingClientRect();
    var top = box.top + panelHead.offsetHeight;
    var rect = element.getBoundingClientRect();
    if (rect.top < top) {
      panel.scrollTop -= top - rect.top + 6;
    } else if (rect.bottom > box.bottom) {
      panel.scrollTop += Math.min(rect.bottom - box.bottom + 6, rect.top - top);
    }
  }

  // The highlighted question is the one digits rate: the focused one, or else the one
  // highlighted last (at first, the first unanswered question). None is highlighted once all
  // are answered: the panel then shows the comment, the flag and the submit button.
  var active = null;
  function setActive(group) {
    if (active) active.classList.remove("is-active");
    active = group;
    Array.prototype.forEach.call(form.querySelectorAll(".panel-section"), function (section) {
      section.classList.toggle("has-active", group ? section.contains(group) : section === finish);
    });
    if (active) {
      active.classList.add("is-active");
      reveal(active);
    } else {
      reveal(finish);
    }
  }
  function focusGroup(group) {
    var radios = radiosOf(group);
    var target = radios.filter(function (r) { return r.checked; })[0] || radios[0];
    setActive(group);
    target.focus({ preventScroll: true });
    reveal(group);
  }
  function focusFinish() {
    setActive(null);
    submitButton.focus({ preventScroll: true });
    reveal(finish);
  }

  // The next question without an answer after ``group``, else the first one before it.
  function nextOpen(group) {
    var index = groups.indexOf(group);
    var after = groups.slice(index + 1).concat(groups.slice(0, index + 1));
    return after.filter(function (g) { return !isAnswered(g); })[0] || null;
  }

  function answer(group, input) {
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    if (active && group !== active) return; // a letter for another question: stay here
    var next = nextOpen(group);
    if (next) focusGroup(next);
    else focusFinish();
  }

  // --- keys -----------------------------------------------------------------------------
  // Letters are unique on the page: each one answers its own question, wherever the focus is.
  function optionForLetter(key) {
    return form.querySelector("input[type=radio][data-key=\"" + key + "\"]");
  }
  // Digit n picks the n-th answer; 0 picks the tenth, as on a number row, so that the top of
  // a 10-point scale has a key. A shorter question has no tenth answer: 0 then says so.
  function optionForDigit(group, digit) {
    var position = digit === 0 ? 10 : digit;
    return radiosOf(group)[position - 1] || null;
  }
  function isRating(group) {
    return group.classList.contains("rating");
  }
  function labelOf(group) {
    return group.querySelector("legend").textContent.replace(/\s+/g, " ").trim();
  }

  function digitKey(target, key) {
    var group = groupOf(target) || active || missingGroups()[0] || null;
    if (!group) {
      say(gettext("Every question is answered, so digits have nothing to rate. Press Tab or click a question to change an answer."));
      return;
    }
    var option = optionForDigit(group, Number(key));
    if (option) {
      answer(group, option);
    } else if (isRating(group)) {
      say(interpolate(gettext("There is no rating %(key)s: ratings go from 1 to %(high)s."), { key: key, high: radiosOf(group).length }, true));
    } else {
      say(interpolate(gettext("“%(question)s” has %(count)s answers: press 1 to %(count)s, or its letter."), { question: labelOf(group), count: radiosOf(group).length }, true));
    }
  }

  function letterKey(key) {
    var option = optionForLetter(key);
    if (option) {
      answer(groupOf(option), option);
      return true;
    }
    if (key === "f") {
      flag.checked = !flag.checked;
      say(flag.checked ? gettext("Item flagged as unusable (F again to unflag).") : gettext("Flag removed."));
    } else if (key === "c") {
      if (narrow.matches) {
        // The compact bar keeps to one line of answers: the comment box opens the whole panel.
        setActive(null);
        expand(true);
      }
      comment.focus();
      reveal(comment);
    } else if (key === "s") {
      if (!skipReason) {
        // No skip form: a practice or qualification item (its note is on the page), or a
        // revision of a submitted one.
        say(document.getElementById("qualification-note")
          ? gettext("Practice and qualification items cannot be skipped: answer this one as well as you can.")
          : gettext("You are revising a submitted item: it cannot be skipped. Change your answers or go back to the current item."));
        return true;
      }
      expand(true);
      skipReason.focus();
      reveal(skipReason);
    } else if (key === "g") {
      window.open(guidelines.href, "_blank", "noopener");
    } else if (key === "r") {
      if (previousItem) window.location.assign(previousItem.href);
      else say(gettext("There is no earlier item to go back to yet."));
    } else if (key === "j" || key === "k") {
      scrollTexts(document.activeElement, key === "k" ? -1 : 1, false);
    } else if (key === "?") {
      toggleShortcuts();
    } else {
      return false;
    }
    return true;
  }

  // The shortcuts open over the page, so that neither the texts pane nor the page scrolls;
  // Esc (or ? again) closes them and gives the focus back where it was.
  function toggleShortcuts() {
    if (shortcuts.classList.contains("is-open")) {
      closeShortcuts();
      return;
    }
    beforeShortcuts = document.activeElement;
    shortcuts.classList.add("is-open");
    shortcuts.focus({ preventScroll: true });
  }
  function closeShortcuts() {
    shortcuts.classList.remove("is-open");
    if (beforeShortcuts && beforeShortcuts.focus) beforeShortcuts.focus({ preventScroll: true });
    beforeShortcuts = null;
  }
  var shortcutsLink = document.getElementById("shortcuts-link");
  if (shortcutsLink) {
    shortcutsLink.addEventListener("click", function (event) {
      event.preventDefault();
      toggleShortcuts();
    });
  }

  function isTyping(element) {
    if (!element || !element.matches) return false;
    return element.isContentEditable ||
      element.matches("textarea, select, input:not([type=radio]):not([type=checkbox]):not([type=submit]):not([type=button])");
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.isComposing) return;
    var target = event.target;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      trySubmit();
      return;
    }
    if (event.key === "Tab" && !event.ctrlKey && !event.altKey && !event.metaKey &&
        panel.classList.contains("is-compact") && groupOf(target)) {
      // The compact bar shows one question: Tab moves to the next one, not past the hidden ones.
      event.preventDefault();
      step(event.shiftKey ? -1 : 1);
      return;
    }
    if (event.key === "Escape" && shortcuts.classList.contains("is-open")) {
      event.preventDefault();
      closeShortcuts();
      return;
    }
    if (isTyping(target)) {
      if (event.key === "Escape") {
        event.preventDefault();
        target.blur();
        if (active) focusGroup(active);
        else focusFinish();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (readingKey(event)) {
      event.preventDefault();
      return;
    }

    if (event.key === "Enter") {
      // Enter on an answer submits; on a button or a link it keeps its own meaning.
      if (target.matches && form.contains(target) &&
          target.matches("input[type=radio], input[type=checkbox]")) {
        event.preventDefault();
        trySubmit();
      } else if (target === document.body || target.classList.contains("response-text")) {
        say(gettext("Enter submits from an answer; Ctrl+Enter submits from anywhere."));
      }
      return;
    }
    if (event.key.length !== 1) return; // Tab, the side arrows, Home, End: the browser's
    var key = event.key.toLowerCase();
    event.preventDefault();
    if (/^[0-9]$/.test(key)) {
      digitKey(target, key);
    } else if (!letterKey(key)) {
      say(interpolate(gettext("“%(key)s” is not a shortcut on this page. Press ? to see the keys."), { key: event.key }, true));
    }
  });

  // --- submit -----------------------------------------------------------------------------
  function missingText(count) {
    return interpolate(ngettext("%(count)s answer is missing.", "%(count)s answers are missing.", count),
      { count: count }, true);
  }

  function showMissing() {
    var missing = missingGroups();
    groups.forEach(function (group) {
      group.classList.toggle("missing", missing.indexOf(group) !== -1);
    });
    if (missing.length) {
      statusLine.textContent = missingText(missing.length);
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
    var unread = readingCheck && !readingAsked ? unreadSides() : [];
    if (unread.length) {
      // Asked once: the next submit goes through, read or not.
      event.preventDefault();
      readingAsked = true;
      var unseen = unread.length === 2
        ? gettext("Less than half of either response has been on screen.")
        : interpolate(gettext("Less than half of response %(side)s has been on screen."), { side: unread[0] }, true);
      var readOn = touchOnly.matches
        ? gettext("Submit again to send your answers anyway, or scroll through the texts first.")
        : gettext("Submit again to send your answers anyway, or read on first (Space scrolls the texts).");
      // Said once, beside the button (not in the key message, which would cover it).
      statusLine.textContent = unseen + " " + readOn;
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
    countAnswers();
    if (group && isAnswered(group)) {
      group.classList.remove("missing");
      if (statusLine.textContent) {
        var left = missingGroups().length;
        statusLine.textContent = left ? missingText(left) : "";
      }
    }
  });
  panel.addEventListener("focusin", function (event) {
    var group = groupOf(event.target);
    if (group && group !== active) setActive(group);
  });
  // A click on an option answers that question; the next open one is highlighted, as with keys.
  // Only clicks on the visible label count: the browser's own clicks on the radio (arrow keys,
  // Space, the label's forwarded click) change the answer and leave the highlight alone.
  form.addEventListener("click", function (event) {
    var option = event.target.closest ? event.target.closest(".opt") : null;
    if (!option || event.target.matches("input")) return;
    var input = option.querySelector("input[type=radio]");
    var group = groupOf(input);
    window.setTimeout(function () {
      if (input.checked) {
        if (active !== group) setActive(group);
        answer(group, input);
      }
    }, 0);
  });

  // --- the compact bar on narrow screens ---------------------------------------------------
  function expand(open) {
    panel.classList.toggle("is-compact", narrow.matches && !open);
    panelToggle.setAttribute("aria-expanded", open ? "true" : "false");
    panelToggle.textContent = open ? gettext("Less") : gettext("All");
    if (active) reveal(active);
  }
  function step(direction) {
    var index = active ? groups.indexOf(active) : groups.length;
    var next = index + direction;
    if (next < 0) next = 0;
    if (next >= groups.length) focusFinish();
    else focusGroup(groups[next]);
  }
  document.getElementById("prev-question").addEventListener("click", function () { step(-1); });
  document.getElementById("next-question").addEventListener("click", function () { step(1); });
  panelToggle.addEventListener("click", function () {
    expand(panel.classList.contains("is-compact"));
  });
  function layout() {
    panelNav.hidden = !narrow.matches;
    panel.classList.toggle("is-compact", narrow.matches && panelToggle.getAttribute("aria-expanded") !== "true");
    if (active) reveal(active);
  }
  narrow.addEventListener("change", layout);
  // The page keeps room below its text for the bar, whatever height the bar has now.
  if (window.ResizeObserver) {
    new ResizeObserver(function () {
      var room = narrow.matches ? panel.offsetHeight : 0;
      document.documentElement.style.setProperty("--panel-room", room + "px");
    }).observe(panel);
  }

  layout();
  noteSeen();
  window.requestAnimationFrame(noteSeen);
  countAnswers();
  var firstMissing = missingGroups()[0] || null;
  if (firstMissing) setActive(firstMissing);
  else setActive(null);
})();
