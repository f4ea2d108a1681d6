package lifecycle

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// Chat is what a chat adapter (Slack, Discord) needs from the core: read
// the questions people act on, answer, vote on and cancel them on a
// person's behalf, keep their drafts, and recognise platform retries.
// *Router implements it; adapters never reach the Store.
type Chat interface {
	// Clock is the time questions are rendered and checked against.
	Clock() Clock
	// Route returns a route by name (threading, responders).
	Route(name string) (domain.Route, bool)

	// Locate returns the project of a question id (chat interactions
	// carry only the id). ENotFound if unknown.
	Locate(ctx context.Context, id string) (project string, err error)
	// Question returns a question. ENotFound if it does not exist in
	// project.
	Question(ctx context.Context, project, id string) (*domain.Question, error)
	// RunQuestions returns every question of a run in creation order.
	RunQuestions(ctx context.Context, project, run string) ([]*domain.Question, error)
	// AttachCopy records (or updates the references of) a posted copy.
	AttachCopy(ctx context.Context, project, id string, t domain.Target) error

	// Check reports whether who may answer q (ENotAllowed otherwise).
	Check(ctx context.Context, q *domain.Question, who domain.Person) error
	// AnswerRead records who's answer (or vote) on a question the adapter
	// has just read and checked (it is not read again) and returns the
	// record after it. An answer to a webhook-mode question waits for the
	// run to pause. Errors: see Router.AnswerRead.
	AnswerRead(ctx context.Context, q *domain.Question, req domain.RespondRequest, who domain.Person) (*domain.Question, error)
	// Cancel cancels a pending question for reason (CancelUser for a
	// person's dismissal) and returns the final record.
	Cancel(ctx context.Context, project, id, reason string, who *domain.Person) (*domain.Question, error)
	// Batch returns a batch of approvals (domain/batch.go). ENotFound if
	// unknown.
	Batch(ctx context.Context, project, id string) (*domain.Batch, error)
	// DecideBatch decides the still-pending calls of a batch at once,
	// each as its own answer (Router.DecideBatch); wait: a webhook-mode
	// answer waits for the run to pause, as AnswerRead's does.
	DecideBatch(ctx context.Context, project, id string, req domain.BatchRespondRequest, who domain.Person, wait bool) (BatchOutcome, error)

	// GetDraft returns one person's partial selections on a question, or
	// an empty map.
	GetDraft(ctx context.Context, project, id, person string) (map[string][]string, error)
	// PutDraft keeps one person's partial selections on a question for
	// ttl, readable from any replica.
	PutDraft(ctx context.Context, project, id, person string, draft map[string][]string, ttl time.Duration) error
	// Once reports true the first time key is seen within ttl (dedupe of
	// platform retries such as Slack's event_id).
	Once(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// Inbox is what the web inbox needs from the core: Chat, plus listing and
// watching a project's questions and marking them read.
type Inbox interface {
	Chat
	// Projects lists every project that has asked a question.
	Projects(ctx context.Context) ([]string, error)
	// List returns a project's questions oldest first, only those with
	// status when status is not empty (at most limit, newest kept).
	List(ctx context.Context, project string, status domain.Status, limit int) ([]*domain.Question, error)
	// ListPage returns one page of a project's questions, oldest first,
	// and the cursor of the next (QuestionReader.ListPage).
	ListPage(ctx context.Context, project string, q ListQuery) (ListPage, error)
	// Deadlines returns up to limit of a project's pending questions,
	// nearest deadline first, and how many are pending.
	Deadlines(ctx context.Context, project string, limit int) ([]Deadline, int, error)
	// Run returns a run. ENotFound if unknown.
	Run(ctx context.Context, project, id string) (*domain.Run, error)
	// MarkRead marks the question's notification read.
	MarkRead(ctx context.Context, project, id string) (*domain.Question, error)
	// Watch wakes the returned channel (buffered, coalescing) whenever an
	// event for the question id occurs, on any replica; id "" watches the
	// whole project. Call stop to release it.
	Watch(project, id string) (wake <-chan struct{}, stop func())
	// Marked reports whether Once has seen key within its ttl (a signed-out
	// session), on any replica.
	Marked(ctx context.Context, key string) (bool, error)
}

var (
	_ Chat  = (*Router)(nil)
	_ Inbox = (*Router)(nil)
)

// Question implements Chat.
func (r *Router) Question(ctx context.Context, project, id string) (*domain.Question, error) {
	return r.store.Get(ctx, project, id)
}

// RunQuestions implements Chat.
func (r *Router) RunQuestions(ctx context.Context, project, run string) ([]*domain.Question, error) {
	return r.store.RunQuestions(ctx, project, run)
}

// AttachCopy implements Chat.
func (r *Router) AttachCopy(ctx context.Context, project, id string, t domain.Target) error {
	return r.store.AttachCopy(ctx, project, id, t)
}

// GetDraft implements Chat.
func (r *Router) GetDraft(ctx context.Context, project, id, person string) (map[string][]string, error) {
	return r.store.GetDraft(ctx, project, id, person)
}

// PutDraft implements Chat.
func (r *Router) PutDraft(ctx context.Context, project, id, person string, draft map[string][]string, ttl time.Duration) error {
	return r.store.PutDraft(ctx, project, id, person, draft, ttl)
}

// Marked implements Inbox.
func (r *Router) Marked(ctx context.Context, key string) (bool, error) {
	return r.store.Marked(ctx, key)
}

// Once implements Chat.
func (r *Router) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	return r.store.Once(ctx, key, ttl)
}

// Projects implements Inbox.
func (r *Router) Projects(ctx context.Context) ([]string, error) { return r.store.Projects(ctx) }

// List implements Inbox.
func (r *Router) List(ctx context.Context, project string, status domain.Status, limit int) ([]*domain.Question, error) {
	return r.store.List(ctx, project, status, limit)
}

// ListPage implements Inbox.
func (r *Router) ListPage(ctx context.Context, project string, q ListQuery) (ListPage, error) {
	return r.store.ListPage(ctx, project, q)
}

// Deadlines implements Inbox.
func (r *Router) Deadlines(ctx context.Context, project string, limit int) ([]Deadline, int, error) {
	return r.store.Deadlines(ctx, project, limit)
}

// Run implements Inbox.
func (r *Router) Run(ctx context.Context, project, id string) (*domain.Run, error) {
	return r.store.Run(ctx, project, id)
}

// MarkRead implements Inbox.
func (r *Router) MarkRead(ctx context.Context, project, id string) (*domain.Question, error) {
	return r.store.MarkRead(ctx, project, id)
}

// Watch implements Inbox.
func (r *Router) Watch(project, id string) (<-chan struct{}, func()) {
	return r.store.Watch(project, id)
}
