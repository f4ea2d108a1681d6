// Package store implements lifecycle.Store on Redis through go-redis's
// UniversalClient (standalone, Sentinel, Cluster). With an empty URL it
// runs the same code against an in-process Redis-compatible server
// (miniredis), for tests that need a Redis protocol server; the embedded
// default of `askbridge serve` is package store/native, which shares this
// package's record codec (codec.go).
//
// One job per file:
//
//   - store.go: Options, Open and Close, the connection (URL parsing and
//     redaction, go-redis's log), Ping, and wrap, which turns a Redis
//     failure into an unavailable error that carries no connection detail.
//   - embedded.go: the in-process server behind an empty Options.URL (tests).
//   - codec.go: the record codec, exported for store/native.
//   - keys.go: key names (base, qkey) and how times, people and flags are
//     written as script arguments and hash fields.
//   - scripts.go: the Lua scripts every state change runs atomically, and
//     the key layout: what each key under a project holds (its comment
//     above preludeLua; docs/operations.md "Redis keys and lifetimes" gives each key's
//     life).
//   - record.go: how a question is stored and read back (d:<id> and
//     q:<id>).
//   - projects.go: the set of projects, known per replica.
//   - questions.go: asking and reading questions: Create, Locate, Get,
//     List, RunQuestions, AttachCopy, MarkRead.
//   - transitions.go: moving a pending question on: Transition and Vote
//     (one outcome for both), Due, DueEscalations, Escalate.
//   - runs.go: agent runs: Run, PauseRun, and who owns a run.
//   - events.go: the project's event stream: Events, LastEventID,
//     AppendEvent.
//   - hub.go: the replica's one Redis subscription, fanned out to Watch
//     through internal/wakehub (the wake-up hub the native store uses too).
//   - outbox.go: the resume-webhook delivery queue (claims and leases).
//   - scratch.go: short-lived helpers: drafts of multi-question answers,
//     Once for dedupe.
//   - audit.go: the audit trail.
//   - trim.go: the sweeper's Trim of what has outlived retention (final
//     records, their index entries, old events and audit entries).
//
// The conformance suite every topology runs is package storetest.
package store
