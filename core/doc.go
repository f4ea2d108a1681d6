// Package core holds askbridge's domain: questions, runs, validation, answer
// parsing, error codes, the state machine and the Router. It knows no chat
// platform, no storage technology and no HTTP: those sit behind the ports
// (ports.go) and are wired by app.
//
// One job per file:
//
//   - types.go: the records (Question, Item, Target, Run, Event, …).
//   - ports.go: the Store's roles (QuestionReader, Questions, Schedule,
//     Runs, EventLog, AuditLog, DeliveryQueue, Scratch, Retention) and the
//     Channel a chat adapter implements; channelerr.go: how a Channel says
//     a failure is permanent.
//   - chat.go: the narrow ports adapters take (Chat, Inbox), served by the
//     Router.
//   - platforms.go: what a chat adapter registers so the core can name its
//     places and check its responders without knowing the platform.
//   - errors.go: error codes and the Error type (internal/httperr maps them
//     to HTTP statuses).
//   - ask.go, route.go: validating an ask and a route (one set of rules for
//     both); action.go: an approval's exact action, its digest and diff;
//     autoallow.go: auto_allow rules.
//   - answer.go, decide.go: parsing an answer, and an approval's decision
//     (edit, always-allow rule, reason).
//   - responders.go: who may answer.
//   - render.go: the words every surface shows (outcome lines, tallies).
//   - ids.go: question ids and short ids.
//   - The Router, by stage of a question's life: router.go (construction,
//     routes, channels, background work), asking.go (Ask and posting),
//     answering.go (answers, votes, cancels: one transition each),
//     copies.go (finishing, re-rendering and reminding on posted copies,
//     with retries), sweeps.go (deadlines, escalation, retention), wait.go
//     (waiting for a question to end).
package core
