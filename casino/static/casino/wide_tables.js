// A table wider than the page scrolls sideways in its own box (.report-scroll, the lists'
// .results), its first column kept in view: where one does overflow, and only there, the box
// is marked so that it says more columns lie to the right (casino/static/casino/admin.css).
(function () {
  "use strict";
  function mark() {
    document.querySelectorAll(".report-scroll, #changelist .results").forEach(function (box) {
      box.classList.toggle("overflows", box.scrollWidth > box.clientWidth + 1);
    });
  }
  window.addEventListener("load", mark);
  window.addEventListener("resize", mark);
})();
