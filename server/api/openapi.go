package api

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/askbridge/askbridge/docs"
	"gopkg.in/yaml.v3"
)

// openAPIJSON is docs/openapi.yaml as JSON, converted once.
var openAPIJSON = sync.OnceValue(func() []byte {
	var doc any
	if err := yaml.Unmarshal(docs.OpenAPI, &doc); err != nil {
		panic("docs/openapi.yaml: " + err.Error()) // embedded at build time; the tests read it
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic("docs/openapi.yaml: " + err.Error())
	}
	return b
})

// openAPI serves the API's OpenAPI document. It needs no token: it
// describes the API, not anyone's data.
func openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIJSON())
}
