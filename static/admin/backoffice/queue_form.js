/* The export queue form: show only the chosen types' fields, list the entity type's fields beside the template,
   fill the entity select, and preview the transform as typed on the same page (plain fetch, no new tab). */
"use strict";
(function () {
  function $(selector, root) { return (root || document).querySelector(selector); }
  function rowOf(name) { return $(".form-row.field-" + name) || $(".fieldBox.field-" + name); }
  function show(node, visible) { if (node) node.hidden = !visible; }

  function setUp() {
    const form = $("#exportqueue_form");
    const typesNode = $("#queue-field-types");
    if (!form || !typesNode) return;
    const types = JSON.parse(typesNode.textContent);
    const panel = $("#queue-preview");
    const select = $("#id_preview_object");
    const output = $("#preview-output");
    const note = $("#preview-note");
    const paths = document.createElement("aside");
    paths.className = "entity-paths";
    paths.id = "entity-paths";

    function value(id) { const node = $("#" + id); return node ? node.value : ""; }

    function refresh() {
      const chosen = {transform: value("id_transform__type"), delivery: value("id_delivery__type")};
      Object.entries(types).forEach(([name, spec]) => {
        show(rowOf(name), spec.types.includes(chosen[spec.group]));
      });
      const auth = value("id_delivery__auth_type");
      if (chosen.delivery === "webhook") {
        show(rowOf("delivery__auth_username"), auth === "basic");
        show(rowOf("delivery__auth_password"), auth === "basic");
        show(rowOf("delivery__auth_token"), auth === "bearer");
      }
      if (chosen.transform === "csv") {
        show(rowOf("transform__group_by"), value("id_transform__rows") === "line_items_grouped");
      }
      show(rowOf("daily_at"), value("id_trigger") === "daily");
      const json = $("#id_edit_json");
      document.querySelectorAll(".config-filters, .config-transform, .config-delivery").forEach((node) => {
        show(node, !(json && json.checked));
      });
      // The entity type's fields go beside what names them: the template, the columns or the output keys.
      const host = {mustache: "transform__template", handlebars: "transform__template", csv: "transform__columns",
                    simple_json: "transform__fields"}[chosen.transform];
      // Moved only when the host changes: a move between mousedown and mouseup would swallow a click on a field.
      // Beside a template; under a table of rows (columns, output keys), which needs the width.
      if (host && rowOf(host) && paths.parentNode !== rowOf(host)) {
        const below = host !== "transform__template";
        paths.classList.toggle("below", below);
        if (below) rowOf(host).append(paths); else rowOf(host).prepend(paths);
      }
      show(paths, Boolean(host));
      const hint = $(".paths-hint", paths);
      if (hint) hint.textContent = CLICK_HINT[chosen.transform] ? " (" + CLICK_HINT[chosen.transform] + ")" : "";
    }

    const CLICK_HINT = {mustache: "click to insert in the template", handlebars: "click to insert in the template",
                        csv: "click to add a column", simple_json: "click to add an output key"};

    function insertPath(path) {
      const kind = value("id_transform__type");
      const name = path.split(".").pop().replace("[0]", "");
      const table = {csv: ["transform__columns", {header: name, path: path}],
                     simple_json: ["transform__fields", {name: name, value: "{" + path + "}"}]}[kind];
      if (table) {
        const editor = $(".field-" + table[0] + " .rows-editor");
        if (editor && editor.addFilledRow) editor.addFilledRow(table[1]);
        return;
      }
      const template = $("#id_transform__template");
      if (!template || rowOf("transform__template").hidden) return;
      const text = "{{" + path + "}}";
      const start = template.selectionStart, end = template.selectionEnd;
      template.value = template.value.slice(0, start) + text + template.value.slice(end);
      template.focus();
      template.selectionStart = template.selectionEnd = start + text.length;
    }

    let loads = 0;  // a slower answer to an earlier choice must not overwrite the latest one

    async function loadEntities() {
      const load = ++loads;
      const params = new URLSearchParams({entity_type: value("id_entity_type")});
      const queue = $("input[name=_queue]");
      if (queue) params.set("_queue", queue.value); else params.set("account", value("id_account"));
      let data = {entities: [], paths: [], note: ""};
      try {
        const response = await fetch(panel.dataset.entitiesUrl + "?" + params, {credentials: "same-origin"});
        if (response.ok) data = await response.json();
      } catch (e) { data.note = "Could not load the entities: " + e; }
      if (load !== loads) return;
      const kept = select.value;
      select.replaceChildren(new Option("the newest", ""));
      data.entities.forEach((entity) => select.add(new Option(entity.label, String(entity.id))));
      if ([...select.options].some((o) => o.value === kept)) select.value = kept;
      paths.replaceChildren();
      const title = document.createElement("h3");
      title.textContent = "Fields of " + value("id_entity_type").replaceAll("_", " ");
      const hint = document.createElement("span");
      hint.className = "paths-hint";
      title.appendChild(hint);
      paths.appendChild(title);
      if (!data.paths.length) {
        const empty = document.createElement("p");
        empty.textContent = data.note || "No fields known.";
        paths.appendChild(empty);
      }
      refresh();
      data.paths.forEach((path) => {
        const code = document.createElement("code");
        code.textContent = path;

        code.addEventListener("click", () => insertPath(path));
        paths.appendChild(code);
      });
      note.textContent = data.note || "";
    }

    async function preview() {
      note.classList.remove("error");
      note.textContent = "Rendering ...";
      let data;
      try {
        const response = await fetch(panel.dataset.previewUrl, {method: "POST", body: new FormData(form),
                                                                credentials: "same-origin"});
        data = await response.json();
      } catch (e) {
        data = {ok: false, error: "The preview failed: " + e};
      }
      if (data.ok) {
        note.textContent = "Element " + data.element_key + ", " + data.content_type + ". Nothing was saved or sent.";
        output.textContent = data.content;
        output.hidden = false;
      } else {
        note.classList.add("error");
        note.textContent = data.error;
        output.hidden = true;
      }
    }

    // Ticking "Edit the JSON instead" starts the JSON from the fields as they are now (assembled by the server,
    // secrets masked), so the two never disagree at the moment of switching.
    async function fieldsToJson() {
      const body = new FormData(form);
      body.delete("edit_json");
      try {
        const response = await fetch(panel.dataset.previewUrl, {method: "POST", body: body, credentials: "same-origin"});
        const data = await response.json();
        if (!data.config) return;
        ["filters", "transform", "delivery"].forEach((name) => {
          const area = $("#id_" + name);
          if (area) area.value = JSON.stringify(data.config[name], null, 2);
        });
      } catch (e) { /* the JSON stays as it was loaded */ }
    }

    form.addEventListener("change", (event) => {
      if (event.target.id === "id_edit_json" && event.target.checked) fieldsToJson();
      refresh();
      if (["id_entity_type", "id_account"].includes(event.target.id)) loadEntities();
    });
    $("#preview-button").addEventListener("click", preview);
    refresh();
    loadEntities();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();
