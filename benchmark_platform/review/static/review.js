// Counts the seconds this page is visible and sends them with the rating (the server caps them by its own clock).
(function () {
  var visibleSince = document.visibilityState === "visible" ? Date.now() : null;
  var field = document.getElementById("seconds_on_page");
  var seconds = field ? (parseFloat(field.value) || 0) : 0;  // seconds counted before a form came back with an error
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") { visibleSince = Date.now(); }
    else if (visibleSince !== null) { seconds += (Date.now() - visibleSince) / 1000; visibleSince = null; }
  });
  var form = document.getElementById("rating-form");
  if (form) {
    form.addEventListener("submit", function () {
      var total = seconds + (visibleSince !== null ? (Date.now() - visibleSince) / 1000 : 0);
      document.getElementById("seconds_on_page").value = total.toFixed(1);
    });
  }
})();
