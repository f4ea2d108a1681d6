// Package native is the embedded store of a single replica: every role of
// lifecycle.Store implemented directly in Go, with in-memory indexes
// (B-trees by deadline, escalation step, retention, creation order,
// status, delivery due time) so every operation costs O(log n) whatever
// the number of records, and, when given a data directory, durable
// through an embedded database (go.etcd.io/bbolt): every change a caller
// is told was made (an ask, an answer, a vote, a pause, a queued
// delivery) is committed and fsynced before the call returns; smaller
// changes whose loss would cost at most a repeat (a copy's reference, a
// draft) are committed in the same order without being waited for. No
// reader sees a change before it is committed, and a commit that fails
// takes back every change not committed (commit.go). The indexes are
// rebuilt from the file at start, once the file is verified (verify.go).
// With a data directory, memory holds what finds a question (indexes,
// status, times, run, fingerprint); its doc (text, options, copies,
// result), its run's record and its audit entries are read from the file
// when asked for, and held in memory only while a change to them waits
// for its commit (commit.go: doc, holdRun, release), so the heap grows by
// about 1 KB per kept question, not by the question.
//
// It keeps a question exactly as package store does on Redis (the same
// record codec: store.EncodeDoc, store.DecodeRecord), so both read back
// alike, and passes the same conformance suite (store/storetest).
//
// One job per file:
//
//   - native.go: Options, Open, Close, Replica, Ping, the lock, and Watch
//     through the wake-up hub shared with package store (internal/wakehub).
//   - disk.go: the database file: opening, compacting and loading it at
//     start, the directory lock.
//   - commit.go: the commit queue (group commit, one fsync for every
//     change queued meanwhile), publication to readers once committed
//     (view), and taking back what a failed commit held (rollback).
//   - failure.go: what a failed write means for an operator, and the
//     probe that lets changes in again once writes succeed.
//   - verify.go: checking a data file page by page before it is opened.
//   - backup.go: a consistent copy while serving (Backup), and Check.
//   - state.go: what is kept per project and how it is written.
//   - questions.go: Create, Get, Locate, List, RunQuestions, AttachCopy,
//     MarkRead.
//   - transitions.go: Transition, Vote, Due, DueEscalations, Escalate.
//   - runs.go: Run and PauseRun.
//   - logs.go: the event stream and the audit trail.
//   - outbox.go: the delivery queue (claims and leases).
//   - scratch.go: drafts, Once and Marked.
//   - trim.go: Trim.
package native
