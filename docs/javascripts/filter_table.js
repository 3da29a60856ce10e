// A filter box over each table inside <div class="searchable">: typing keeps the rows whose
// text contains what was typed (case-insensitive); docs/coverage.md's table of names uses it.
function addFilters() {
  for (const holder of document.querySelectorAll("div.searchable")) {
    const table = holder.querySelector("table");
    if (!table || holder.querySelector("input.table-filter")) continue;
    const box = document.createElement("input");
    box.type = "search";
    box.className = "table-filter md-input";
    box.placeholder = "Filter: type a name (zeros, Tensor.add_, nn.LSTM, not yet)";
    box.setAttribute("aria-label", "Filter the table's rows");
    box.style.cssText = "width: 100%; padding: 0.4em; margin-bottom: 0.6em; font-size: 0.8rem";
    const count = document.createElement("p");
    count.setAttribute("aria-live", "polite");
    const rows = [...table.tBodies[0].rows];
    const show = () => {
      const wanted = box.value.trim().toLowerCase();
      let shown = 0;
      for (const row of rows) {
        const keep = !wanted || row.textContent.toLowerCase().includes(wanted);
        row.hidden = !keep;
        shown += keep;
      }
      count.textContent = `${shown} of ${rows.length} names`;
    };
    box.addEventListener("input", show);
    holder.prepend(box, count);
    show();
  }
}
if (typeof document$ !== "undefined") document$.subscribe(addFilters);  // Material's page loads
else document.addEventListener("DOMContentLoaded", addFilters);
