// Package docs holds the documents the bridge serves: the OpenAPI
// description of its HTTP API.
package docs

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of the HTTP API (docs/openapi.yaml).
//
//go:embed openapi.yaml
var OpenAPI []byte
