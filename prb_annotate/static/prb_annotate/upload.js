// The dataset upload form: sends the file with XMLHttpRequest to show how much is sent, then
// says the import is running. The server answers JSON with where to go once the import is
// done, or the page again with the problems, which replaces the form here; any other answer
// (a file over the size limit, the site busy, an expired session) is said in the status line,
// and the form can be sent again.
(function () {
  "use strict";

  function mebibytes(bytes) {
    return interpolate(gettext("%s MiB"), [(bytes / (1024 * 1024)).toFixed(1)]);
  }

  function bind() {
    var form = document.getElementById("upload-form");
    if (!form || !window.FormData || !window.XMLHttpRequest) {
      return; // the form posts as a plain form
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      send(form);
    });
  }

  function send(form) {
    var box = document.getElementById("upload-progress");
    var bar = document.getElementById("upload-bar");
    var status = document.getElementById("upload-status");
    var button = document.getElementById("upload-button");
    var request = new XMLHttpRequest();
    box.hidden = false;
    button.disabled = true;
    status.textContent = gettext("Sending…");
    request.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable) {
        bar.value = Math.round((100 * event.loaded) / event.total);
        status.textContent = interpolate(gettext("Sent %(sent)s of %(total)s (%(percent)s%)"), {
          sent: mebibytes(event.loaded),
          total: mebibytes(event.total),
          percent: bar.value,
        }, true);
      }
    });
    request.upload.addEventListener("load", function () {
      bar.removeAttribute("value"); // indeterminate: the server reads and checks every record
      status.textContent = gettext("Sent. Importing: every record is checked, and nothing is written unless all are good…");
    });
    request.addEventListener("load", function () {
      var type = request.getResponseHeader("Content-Type") || "";
      if (request.status === 200 && type.indexOf("application/json") === 0) {
        window.location.assign(JSON.parse(request.responseText).location);
        return;
      }
      if (!replaceMain(request.responseText)) {
        refused(request, bar, button, status);
      }
    });
    request.addEventListener("error", function () {
      button.disabled = false;
      status.textContent = gettext("The upload was interrupted: nothing was imported. Try again.");
    });
    request.open("POST", form.action);
    request.setRequestHeader("Accept", "application/json");
    request.send(new FormData(form));
  }

  // The page again, with the problems in place of the form; false when the answer is another
  // page (a refusal), which replaces nothing.
  function replaceMain(html) {
    var page = new DOMParser().parseFromString(html, "text/html");
    var fresh = page.getElementById("upload-main");
    var current = document.getElementById("upload-main");
    if (!fresh || !current) {
      return false;
    }
    current.replaceWith(fresh);
    bind();
    var problems = document.getElementById("import-problems");
    if (problems) {
      problems.scrollIntoView();
    }
    return true;
  }

  // What the refusing page says (its main text: the size limit, a retry time), in the status
  // line; nothing was imported, and the form is ready again.
  function refused(request, bar, button, status) {
    var page = new DOMParser().parseFromString(request.responseText || "", "text/html");
    var said = (page.querySelector("main") || page.body || page.documentElement).textContent;
    said = (said || "").replace(/\s+/g, " ").trim().slice(0, 400);
    bar.value = 0;
    button.disabled = false;
    status.textContent = interpolate(gettext("Refused (HTTP %(code)s), nothing was imported: %(said)s"), {
      code: request.status,
      said: said || request.statusText,
    }, true);
  }

  bind();
})();
