package backend_test

import (
	"github.com/rotd/coordination/registry/backend"
	_ "github.com/rotd/coordination/registry/engines"

	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
)

func TestOpen(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	where, created, err := backend.Init(ctx, backend.Options{Root: root})
	if err != nil || len(created) == 0 {
		t.Fatalf("init: %v %v", created, err)
	}
	dir := filepath.Join(root, ".rotd", "coordination")
	if where != dir {
		t.Fatalf("init at %s, want %s", where, dir)
	}
	if _, again, err := backend.Init(ctx, backend.Options{URL: "file://" + root}); err != nil || len(again) != 0 {
		t.Fatalf("a second init: %v %v; want nothing created", again, err)
	}
	for _, o := range []backend.Options{
		{Root: root},
		{URL: "file://" + root},
		{URL: "file://" + dir},
		{URL: "file://" + filepath.Join(root, ".rotd")},
		{URL: "file://localhost" + root + "/"},
	} {
		b, err := backend.Open(ctx, o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if b.Name() != "file" || b.Where() != dir || b.Artifacts() == nil {
			t.Errorf("%+v: %s at %s", o, b.Name(), b.Where())
		}
		b.Close()
	}
}

// Anything but a file URL is refused before anything is touched (exit 1),
// naming the URL with its password masked.
func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ url, want string }{
		{"nats://alice:s3cret@hub:4222/bad.ns", `backend nats://alice:xxxxx@hub:4222/bad.ns: namespace "bad.ns" is invalid`},
		{"nats://alice:s3cret@hub:99999/proj", `port "99999"`},
		{"redis://alice:s3cret@hub/proj", `unknown backend scheme "redis" in redis://alice:xxxxx@hub/proj`},
		{"http://example.com", "unknown backend scheme"},
		{"file:relative/path", "must be absolute"},
		{"file://host/abs", "local path only"},
		{"/abs/path", "is not a URL"},
		{"%zz", "is not a URL"},
	} {
		_, err := backend.Open(ctx, backend.Options{URL: c.url})
		if coord.CodeOf(err) != coord.CodeUsage || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want exit 1 with %q", c.url, err, c.want)
		}
	}
	if _, err := backend.Open(ctx, backend.Options{}); coord.CodeOf(err) != coord.CodeUsage {
		t.Errorf("no root, no URL: %v", err)
	}
}

// A .rotd or .rotd/coordination reached through a symlink is refused (exit
// 2), whichever way the tree is named.
func TestOpenRefusesSymlinkedTree(t *testing.T) {
	ctx := context.Background()
	for _, link := range []string{".rotd", ".rotd/coordination"} {
		t.Run(link, func(t *testing.T) {
			real, root := t.TempDir(), t.TempDir()
			if _, _, err := backend.Init(ctx, backend.Options{Root: real}); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(real, link)
			if link == ".rotd/coordination" {
				os.Mkdir(filepath.Join(root, ".rotd"), 0o755)
			}
			if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
			for _, o := range []backend.Options{{Root: root}, {URL: "file://" + filepath.Join(root, ".rotd", "coordination")}} {
				_, err := backend.Open(ctx, o)
				if coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), "is a symlink") {
					t.Errorf("%+v: %v, want exit 2 naming the symlink", o, err)
				}
			}
		})
	}
}

func TestOpenNoTree(t *testing.T) {
	_, err := backend.Open(context.Background(), backend.Options{Root: t.TempDir()})
	if coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), "coord init") {
		t.Fatalf("open without a tree: %v", err)
	}
}
