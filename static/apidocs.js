// The API reference page: Swagger UI (npm swagger-ui-dist, vendored by
// `make static`) renders GET /api/v1/openapi.json. Everything it loads
// comes from this server: no validator badge (validatorUrl null), no
// external fonts. Swagger UI's own words are English only.
(function () {
  "use strict";
  window.SwaggerUIBundle({
    url: "/api/v1/openapi.json",
    dom_id: "#swagger-ui",
    validatorUrl: null,
    deepLinking: true,
    tryItOutEnabled: false,
  });
})();
