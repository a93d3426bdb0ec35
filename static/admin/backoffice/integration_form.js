/* The runtime integration form: the chosen kind's placeholders listed beside the URL and the templates. */
"use strict";
(function () {
  function setUp() {
    const data = document.getElementById("kind-placeholders");
    const kind = document.getElementById("id_kind");
    const urlRow = document.querySelector(".form-row.field-url");
    if (!data || !urlRow) return;
    const placeholders = JSON.parse(data.textContent);
    const aside = document.createElement("aside");
    aside.className = "entity-paths integration-placeholders";
    aside.id = "kind-placeholders-list";
    urlRow.prepend(aside);
    function refresh() {
      const chosen = kind ? kind.value : (document.querySelector(".field-kind .readonly") || {}).textContent;
      aside.replaceChildren();
      const title = document.createElement("h3");
      title.textContent = chosen ? "Placeholders of " + chosen + " (URL, query, headers, body)" : "Choose the kind";
      aside.appendChild(title);
      (placeholders[(chosen || "").trim()] || []).forEach((name) => {
        const code = document.createElement("code");
        code.textContent = name;
        aside.appendChild(code);
      });
    }
    if (kind) kind.addEventListener("change", refresh);
    refresh();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();
