package lifecycle_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdaptersReachTheCoreThroughItsPorts: the adapters take lifecycle.Chat (or
// lifecycle.Inbox) and never the whole Router or its Store, so what they may do
// to a question stays visible in one small interface.
func TestAdaptersReachTheCoreThroughItsPorts(t *testing.T) {
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir("../adapters", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "channeltest" || d.Name() == "crosstest") {
			return filepath.SkipDir // test harnesses build a whole bridge around the adapters
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Store" && len(n.Args) == 0 {
					found = append(found, fset.Position(n.Pos()).String()+": Store()")
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "lifecycle" && n.Sel.Name == "Router" {
					found = append(found, fset.Position(n.Pos()).String()+": lifecycle.Router")
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found, "adapters must use lifecycle.Chat / lifecycle.Inbox")
}

func TestRouterServesTheChatPort(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	var chat lifecycle.Inbox = lifecycle.NewRouter(lifecycle.RouterConfig{Store: st})
	res, err := chat.(*lifecycle.Router).Ask(ctx, "p", &domain.AskRequest{RunID: "r", Question: "Go?"}, "")
	require.NoError(t, err)
	id := res.Question.ID

	project, err := chat.Locate(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "p", project)
	q, err := chat.Question(ctx, "p", id)
	require.NoError(t, err)
	assert.Equal(t, "Go?", q.Questions[0].Question)
	_, err = chat.Question(ctx, "other", id)
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err), "a question is read in its own project only")
	qs, err := chat.RunQuestions(ctx, "p", "r")
	require.NoError(t, err)
	assert.Len(t, qs, 1)
	listed, err := chat.List(ctx, "p", domain.StatusPending, 10)
	require.NoError(t, err)
	assert.Len(t, listed, 1)
	projects, err := chat.Projects(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"p"}, projects)

	require.NoError(t, chat.PutDraft(ctx, "p", id, "slack:U1", map[string][]string{"Go?": {"yes"}}, time.Minute))
	d, err := chat.GetDraft(ctx, "p", id, "slack:U1")
	require.NoError(t, err)
	assert.Equal(t, []string{"yes"}, d["Go?"])

	first, err := chat.Once(ctx, "slack:event:E1", time.Minute)
	require.NoError(t, err)
	again, err := chat.Once(ctx, "slack:event:E1", time.Minute)
	require.NoError(t, err)
	assert.True(t, first)
	assert.False(t, again, "a platform retry is recognised")
}
