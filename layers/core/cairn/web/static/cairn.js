// Cairn web UI: progressive enhancement only. Every page works without this file.
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
document.addEventListener("click", function (event) {
  var button = event.target.closest ? event.target.closest("[data-copy]") : null;
  if (!button) {
    return;
  }
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (source && navigator.clipboard) {
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = "Copied";
    });
  }
});
