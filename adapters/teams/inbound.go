package teams

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/domain"
	docshape "github.com/askbridge/askbridge/internal/shape"
)

// maxActivityBody bounds an inbound activity.
const maxActivityBody = 1 << 20

// replayWindow is how long an activity id is remembered: longer than a
// token lives past its issue (an hour) plus the skew.
const replayWindow = 2 * time.Hour

// words writes the sentences every surface shows (domain.Words) for Teams:
// plain names and text.
var words = domain.Words{}

// MessagesHandler serves POST /teams/messages, the bot's messaging
// endpoint. The Bot Framework token is checked before anything of the body
// is read as an activity (401 otherwise, nothing changed); an activity id
// seen before is acknowledged and ignored; adaptiveCard/action invokes are
// answered with the card to show, installs and channel events keep the
// conversation's reference.
func (a *Adapter) MessagesHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := a.auth.verify(r.Context(), r.Header.Get("Authorization"))
		if err != nil {
			a.log.Debug("refused a request to /teams/messages", "err", err)
			http.Error(w, "invalid or missing Bot Framework token", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxActivityBody))
		if err != nil {
			http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		var act activity
		if docshape.CheckDepth(body, docshape.MaxDepth) != nil || json.Unmarshal(body, &act) != nil {
			http.Error(w, "malformed activity", http.StatusBadRequest)
			return
		}
		if err := claims.check(act.ServiceURL, act.ChannelID); err != nil {
			a.log.Debug("refused an activity its token does not cover", "err", err)
			http.Error(w, "invalid or missing Bot Framework token", http.StatusUnauthorized)
			return
		}
		ctx := r.Context()
		if !a.firstTime(ctx, act.ID) {
			// A captured activity sent again while its token is valid
			// changes nothing.
			if act.Type == "invoke" {
				writeJSON(w, http.StatusOK, invokeResponse{StatusCode: http.StatusOK, Type: "application/vnd.microsoft.activity.message",
					Value: "This action was already handled."})
				return
			}
			w.WriteHeader(http.StatusOK)
			return
		}
		a.learn(ctx, &act)
		switch {
		case act.Type == "invoke" && act.Name == "adaptiveCard/action":
			writeJSON(w, http.StatusOK, a.invoke(ctx, &act))
		case act.Type == "invoke":
			writeJSON(w, http.StatusOK, invokeError(http.StatusNotImplemented, "NotImplemented", "This bot only handles askbridge's cards."))
		default:
			// installationUpdate, conversationUpdate, message: the
			// conversation's reference is kept (learn); nothing to answer.
			w.WriteHeader(http.StatusOK)
		}
	})
}

// firstTime reports whether activity id is seen for the first time on any
// replica; when the store cannot say, the activity goes through
// (answering needs the store anyway, and answers are exactly-once there).
func (a *Adapter) firstTime(ctx context.Context, id string) bool {
	if id == "" {
		return true
	}
	first, err := a.router.Once(ctx, "teams:activity:"+id, replayWindow)
	return err != nil || first
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func invokeError(status int, code, message string) invokeResponse {
	return invokeResponse{StatusCode: status, Type: errorContentType,
		Value: map[string]string{"code": code, "message": message}}
}

// person is who sent an activity, as responders name them.
func person(act *activity) (domain.Person, bool) {
	if act.From == nil || act.From.AADObjectID == "" {
		return domain.Person{}, false
	}
	return domain.Person{Platform: Platform, ID: act.From.AADObjectID, Name: act.From.Name}, true
}

// invoke handles an Action.Execute (or a card's refresh) and returns the
// card the person sees next: the question's state for everyone, or their
// own view with a notice only they see when what they did changed nothing.
func (a *Adapter) invoke(ctx context.Context, act *activity) invokeResponse {
	var v invokeValue
	if err := json.Unmarshal(act.Value, &v); err != nil || v.Action.Type != "Action.Execute" {
		return invokeError(http.StatusBadRequest, "BadRequest", "This is not an Action.Execute of an askbridge card.")
	}
	id := ActionQuestionID(v.Action.Data)
	if id == "" {
		if b := BatchActionID(v.Action.Data); b != "" {
			return a.batchInvoke(ctx, act, b, v.Action.Verb, v.Action.Data)
		}
		return invokeError(http.StatusBadRequest, "BadRequest", words.NotOurs().Text)
	}
	project, err := a.router.Locate(ctx, id)
	if err != nil {
		return invokeError(http.StatusNotFound, "NotFound", words.Refusal(err, nil, domain.Person{}).Text)
	}
	q, err := a.router.Question(ctx, project, id)
	if err != nil {
		return invokeError(http.StatusNotFound, "NotFound", words.Refusal(err, nil, domain.Person{}).Text)
	}
	if !postedOn(q, act) {
		// A card's data naming a question is not enough: a card copied
		// into another conversation must not act on it.
		return invokeError(http.StatusBadRequest, "BadRequest", words.NotOurs().Text)
	}
	// viewer is how Teams names the person for a card of their own
	// (refresh.userIds takes the from.id, not the Entra object id).
	viewer := ""
	if act.From != nil {
		viewer = act.From.ID
	}
	who, ok := person(act)
	if !ok {
		return a.viewOn(ctx, q, act, viewer, "Teams did not say who you are (no Entra object id); nothing was recorded.")
	}
	in, err := ParseAction(q, v.Action.Verb, v.Action.Data)
	if err != nil {
		// Why nothing can change comes before what is missing: the
		// question ended, or this person may not answer it.
		if q.Status != domain.StatusPending {
			return a.viewOn(ctx, q, act, viewer, words.Late(q).Text)
		}
		if cerr := a.router.Check(ctx, q, who); cerr != nil {
			return a.viewOn(ctx, q, act, viewer, words.Refusal(cerr, q, who).Text)
		}
		return a.viewOn(ctx, q, act, viewer, "Not sent: "+err.Error()+". "+domain.ChangedNothing)
	}
	switch {
	case in.Refresh:
		notice := ""
		if q.Status == domain.StatusPending {
			if err := a.router.Check(ctx, q, who); err != nil {
				notice = words.Refusal(err, q, who).Text
			}
		}
		return a.viewOn(ctx, q, act, viewer, notice)
	case in.Dismiss:
		final, err := a.router.Cancel(ctx, project, q.ID, domain.CancelUser, &who)
		return a.outcome(ctx, act, q, final, who, viewer, err)
	default:
		final, err := a.router.AnswerRead(ctx, q, in.Request, who)
		return a.outcome(ctx, act, q, final, who, viewer, err)
	}
}

// outcome is the card after an answer, a vote or a dismissal (its batch's
// card when the click came from one): the question's state for everyone (the Router updates every other copy), or
// the person's own view with why nothing changed.
func (a *Adapter) outcome(ctx context.Context, act *activity, read, after *domain.Question, who domain.Person, viewer string, err error) invokeResponse {
	if err == nil && after != nil {
		return a.viewOn(ctx, after, act, "", "")
	}
	switch domain.ErrorCode(err) {
	case domain.ENotAllowed, domain.EAlreadyAnswered, domain.EQuestionCancelled, domain.EQuestionExpired,
		domain.EConflict, domain.ERunNotPaused, domain.EInvalidAnswer, domain.ENotFound:
	default:
		a.log.Error("handling a Teams card action failed", "question", read.ID, "err", err)
	}
	now := after
	if now == nil {
		if q, gerr := a.router.Question(ctx, read.ProjectID, read.ID); gerr == nil {
			now = q
		} else {
			now = read
		}
	}
	return a.viewOn(ctx, now, act, viewer, words.Refusal(err, now, who).Text)
}

// view is q's card as viewer (a Teams user id; "" for everyone) sees it,
// with notice shown only to them.
func (a *Adapter) view(q *domain.Question, viewer, notice string) invokeResponse {
	c, err := QuestionCard(q, CardView{PublicURL: a.cfg.PublicURL, Viewer: viewer, Refused: notice})
	if err != nil {
		a.log.Error("rendering a card failed", "question", q.ID, "err", err)
		return invokeError(http.StatusInternalServerError, "InternalError", words.Failed().Text)
	}
	return invokeResponse{StatusCode: http.StatusOK, Type: cardContentType, Value: c}
}

// postedOn reports whether an invoke came from one of q's copies: the
// card's activity in the copy's conversation.
func postedOn(q *domain.Question, act *activity) bool {
	if act.Conversation == nil {
		return false
	}
	conv := baseConversation(act.Conversation.ID)
	for _, t := range q.Targets {
		if t.Platform != Platform || t.MessageTS == "" {
			continue
		}
		if t.MessageTS == act.ReplyToID && baseConversation(t.Refs[refConversation]) == conv {
			return true
		}
	}
	return false
}
