// The dataset upload form: sends the file with XMLHttpRequest to show how much is sent, then
// says the import is running. The server answers JSON with where to go once the import is
// done, or the page again with the problems, which replaces the form here.
(function () {
  "use strict";

  function megabytes(bytes) {
    return (bytes / (1024 * 1024)).toFixed(1) + " MB";
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
    status.textContent = "Sending…";
    request.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable) {
        bar.value = Math.round((100 * event.loaded) / event.total);
        status.textContent =
          "Sent " + megabytes(event.loaded) + " of " + megabytes(event.total) + " (" + bar.value + "%)";
      }
    });
    request.upload.addEventListener("load", function () {
      bar.removeAttribute("value"); // indeterminate: the server reads and checks every record
      status.textContent = "Sent. Importing: every record is checked, and nothing is written unless all are good…";
    });
    request.addEventListener("load", function () {
      var type = request.getResponseHeader("Content-Type") || "";
      if (request.status === 200 && type.indexOf("application/json") === 0) {
        window.location.assign(JSON.parse(request.responseText).location);
        return;
      }
      replaceMain(request.responseText);
    });
    request.addEventListener("error", function () {
      button.disabled = false;
      status.textContent = "The upload was interrupted: nothing was imported. Try again.";
    });
    request.open("POST", form.action);
    request.setRequestHeader("Accept", "application/json");
    request.send(new FormData(form));
  }

  function replaceMain(html) {
    var page = new DOMParser().parseFromString(html, "text/html");
    var fresh = page.getElementById("upload-main");
    var current = document.getElementById("upload-main");
    if (fresh && current) {
      current.replaceWith(fresh);
      bind();
      var problems = document.getElementById("import-problems");
      if (problems) {
        problems.scrollIntoView();
      }
    }
  }

  bind();
})();
