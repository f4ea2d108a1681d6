// Package storetest starts real Redis servers for tests and holds the
// conformance suite every lifecycle.Store implementation must pass.
//
// Run (suite.go) is the one entry point: it runs every case below against
// the replicas it is given, so the embedded store, standalone Redis,
// Sentinel and Cluster all pass the same cases. Cases by role:
//
//   - questions.go: asking, listing, locating, re-attaching, superseding,
//     idempotency, the first answer winning, copies, deadlines, retention,
//     the record's round trip.
//   - runs.go: runs and their ownership, webhook-mode pause and
//     continuation, the refusal of an answer while the run is not paused,
//     a run's questions.
//   - events.go: the event stream and watching across replicas.
//   - deliveries.go: the resume-webhook queue: claims, leases, retries.
//   - scratch.go: drafts, Once, marking read.
//   - audit.go: the audit trail.
//   - lifetimes.go: every key ends with retention; the sweeper's trim.
//
// redis.go and topology.go start the servers (standalone, Sentinel,
// Cluster) the tests run on.
package storetest
