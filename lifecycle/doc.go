// Package lifecycle runs a question's life: the Router asks, posts copies,
// takes answers, votes and cancels (one atomic transition each), finishes
// every copy, sweeps deadlines, escalation and retention, and wakes those
// who wait. The rules it applies live in package domain; what it drives
// sits behind its ports.
//
// One job per file:
//
//   - ports.go: the Store's roles and the Channel a surface implements,
//     with the optional abilities a Channel may have; channelerr.go: how a
//     Channel says a failure is permanent.
//   - chat.go: the narrow ports surfaces take (Chat, Inbox), served by the
//     Router.
//   - router.go: construction, routes, channels, background work.
//   - asking.go: Ask and posting; answering.go: answers, votes and cancels;
//     approving.go: approvals allowed by rule, and their audit.
//   - copies.go: finishing, re-rendering and reminding on posted copies,
//     with retries.
//   - sweeps.go: deadlines, escalation, retention.
//   - wait.go: waiting for a question to end.
package lifecycle
