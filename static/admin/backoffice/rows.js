/* Rows editor: a table of inputs over a hidden input that holds JSON (core.widgets.RowsWidget).
   Every change writes the rows back into the hidden input as the JSON the service expects. */
"use strict";
(function () {
  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function setUp(editor) {
    if (editor.dataset.ready) return;
    editor.dataset.ready = "1";
    const spec = JSON.parse(editor.dataset.spec);
    const hidden = document.getElementById(editor.dataset.for);
    const columns = spec.columns && spec.columns.length
      ? spec.columns
      : [{key: "name", label: "Name"}, {key: "value", label: "Value"}];
    let initial;
    try { initial = JSON.parse(hidden.value || "null"); } catch (e) { initial = null; }
    let rows = [];
    if (spec.shape === "object" && initial && typeof initial === "object" && !Array.isArray(initial)) {
      rows = Object.entries(initial).map(([name, value]) => ({name: name, value: value}));
    } else if (Array.isArray(initial)) {
      rows = initial.filter((row) => row && typeof row === "object");
    }
    const table = el("table", {class: "rows-table"});
    const head = el("tr");
    columns.forEach((c) => head.appendChild(el("th", {}, c.label)));
    head.appendChild(el("th"));
    table.appendChild(el("thead")).appendChild(head);
    const body = table.appendChild(el("tbody"));
    editor.appendChild(table);
    const add = el("button", {type: "button", class: "button rows-add"}, spec.add || "Add a row");
    editor.appendChild(add);

    function write() {
      const out = spec.shape === "object" ? {} : [];
      body.querySelectorAll("tr").forEach((tr) => {
        const row = Object.assign({}, tr.extra || {});  // keys no input shows are kept as they were
        tr.querySelectorAll("[data-key]").forEach((input) => {
          if (input.value !== "") row[input.dataset.key] = input.value;
        });
        if (spec.shape === "object") {
          if (row.name) out[row.name] = row.value || "";
        } else if (Object.keys(row).length) {
          out.push(row);
        }
      });
      hidden.value = JSON.stringify(out);
      hidden.dispatchEvent(new Event("change", {bubbles: true}));
    }

    const shown = columns.map((c) => c.key);

    function addRow(row) {
      const tr = el("tr", {class: "rows-row"});
      if (spec.shape !== "object") {
        tr.extra = Object.fromEntries(Object.entries(row).filter(([key]) => !shown.includes(key)));
      }
      columns.forEach((c) => {
        const td = tr.appendChild(el("td", {class: "rows-cell-" + c.key}));
        let input;
        const value = row[c.key] === undefined || row[c.key] === null ? "" : String(row[c.key]);
        if (c.choices) {
          input = el("select", {"data-key": c.key, "aria-label": c.label});
          c.choices.forEach(([v, label]) => {
            const option = el("option", {value: v}, label);
            if (v === value) option.selected = true;
            input.appendChild(option);
          });
        } else {
          const secret = spec.mask && value === spec.mask;
          input = el("input", {type: secret ? "password" : "text", "data-key": c.key, "aria-label": c.label,
                               placeholder: c.placeholder || ""});
          input.value = value;
          if (c.suggestions) {
            const listId = editor.dataset.for + "-" + c.key + "-list";
            if (!document.getElementById(listId)) {
              const list = editor.appendChild(el("datalist", {id: listId}));
              c.suggestions.forEach((s) => list.appendChild(el("option", {value: s})));
            }
            input.setAttribute("list", listId);
          }
          if (secret) input.addEventListener("focus", () => { if (input.value === spec.mask) input.select(); });
        }
        input.addEventListener("input", write);
        input.addEventListener("change", write);
        td.appendChild(input);
      });
      const remove = el("button", {type: "button", class: "button rows-remove", title: "Remove this row",
                                     "aria-label": "Remove"}, "\u2715");
      remove.addEventListener("click", () => { tr.remove(); write(); });
      tr.appendChild(el("td")).appendChild(remove);
      body.appendChild(tr);
      return tr;
    }

    rows.forEach(addRow);
    // For the page's own scripts: add a filled-in row (a field clicked in a list of the entity's fields).
    editor.addFilledRow = (row) => { addRow(row); write(); };
    add.addEventListener("click", () => {
      const tr = addRow({});
      const first = tr.querySelector("input, select");
      if (first) first.focus();
    });
  }

  function setUpAll() { document.querySelectorAll(".rows-editor").forEach(setUp); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUpAll);
  else setUpAll();
})();
