/* Sort the audit's sortable tables by the clicked column; numbers as numbers, empty cells
   last. Loaded from a file (the pages' Content-Security-Policy allows no inline script); the
   standalone HTML report inlines this same file. */
(function () {
  "use strict";
  document.querySelectorAll("table.sortable th").forEach(function (header, column) {
    header.classList.add("sortable-heading");
    header.addEventListener("click", function () {
      var table = header.closest("table"), body = table.tBodies[0];
      var ascending = header.dataset.order !== "asc";
      table.querySelectorAll("th").forEach(function (other) { delete other.dataset.order; });
      header.dataset.order = ascending ? "asc" : "desc";
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
        if (x === "" || y === "") { return (x === "") - (y === ""); }
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
})();
