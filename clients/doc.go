// Package clients holds no Go code: its tests run the TypeScript package
// (clients/typescript) and the Python package (clients/python) against a
// real `askbridge serve`, with webhook test vectors signed by agent/webhook.
package clients
