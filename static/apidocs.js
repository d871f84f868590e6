// The API reference page: Swagger UI (npm swagger-ui-dist, vendored by
// `make static`) renders GET /api/v1/openapi.json. Everything it loads
// comes from this server: no validator badge (validatorUrl null), no
// external fonts. The page's own words follow the language switch;
// Swagger UI's are English only.
(function () {
  "use strict";
  const ui = window.cronsheetUI;

  document.addEventListener("DOMContentLoaded", () => {
    ui.setup();
    window.SwaggerUIBundle({
      url: "/api/v1/openapi.json",
      dom_id: "#swagger-ui",
      validatorUrl: null,
      deepLinking: true,
      tryItOutEnabled: false,
      onComplete: () => { document.body.dataset.ready = "1"; },
    });
  });
})();
