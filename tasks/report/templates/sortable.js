// Sort any table of class "sortable" by a click (or Enter) on a column heading: numbers by the
// value in each cell's data-sort, text by its text; cells without a value go last either way.
(function () {
  "use strict";
  function keyOf(cell, numeric) {
    if (!cell || !cell.hasAttribute("data-sort")) { return null; }
    var raw = cell.getAttribute("data-sort");
    if (numeric) { var n = parseFloat(raw); return isNaN(n) ? null : n; }
    return raw.toLowerCase();
  }
  function sortBy(table, th) {
    var headers = Array.prototype.slice.call(th.parentNode.children);
    var column = headers.indexOf(th);
    var numeric = th.classList.contains("num");
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = keyOf(a.cells[column], numeric), y = keyOf(b.cells[column], numeric);
      if (x === null || y === null) { return (x === null) - (y === null); }
      var order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    if (!table.tHead) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.addEventListener("click", function () { sortBy(table, th); });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter") { sortBy(table, th); }
      });
    });
  });
}());
