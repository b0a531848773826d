package rotdtemplate

import (
	"io/fs"
	"reflect"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// TestTemplateConfigIsTheDefault: the config.json `coord init` lays down
// says what an absent one means. A default changed in coord.DefaultConfig
// and not in the template (or the other way round) fails here: a fresh
// project and one whose config.json was deleted must behave alike.
func TestTemplateConfigIsTheDefault(t *testing.T) {
	data, err := fs.ReadFile(Coordination(), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := format.ParseConfig(".rotd-template/coordination/config.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if want := coord.DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the template's config.json reads as\n%+v\nthe default is\n%+v", got, want)
	}
}
