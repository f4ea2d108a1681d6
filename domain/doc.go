// Package domain holds askbridge's rules with no state and no ports: the
// records (questions, items, runs, events), validating an ask and a route,
// parsing an answer, deciding an approval, who may answer, and the words
// every surface shows. It knows no chat platform, no storage and no HTTP;
// the lifecycle package runs these rules against a store and the channels.
//
// One job per file:
//
//   - types.go: the records (Question, Item, Target, Run, Event, …).
//   - errors.go: error codes and the Error type (internal/httperr maps
//     them to HTTP statuses).
//   - validate.go, route.go: validating an ask and a route (one set of rules for
//     both); action.go: an approval's exact action, its digest and diff;
//     autoallow.go: auto_allow rules and what they allow without asking.
//   - parse.go: parsing an answer; decide.go: an approval's decision
//     (edit, always-allow rule, reason).
//   - responders.go: who may answer; platforms.go: what a surface registers
//     so the domain can name its places and check its responder groups.
//   - render.go: the words every surface shows on a copy (outcome lines,
//     tallies, durations); words.go: the one table of what a person is
//     told when what they did does not count (not allowed, already
//     answered, closed, run not paused, action changed, gone, not valid,
//     failed) and the confirmation before a dismissal.
//   - ids.go: question ids and short ids.
package domain
