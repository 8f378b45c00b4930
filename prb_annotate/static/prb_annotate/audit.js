/* The audit report: sort the annotator table by the clicked column; numbers as numbers, empty
   cells last. Loaded by the audit page, inlined in the standalone HTML file. */
document.querySelectorAll("table.sortable th").forEach(function (header, column) {
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
